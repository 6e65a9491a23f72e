//! Finding the `hyperd` executable.
//!
//! hyperd is not on anyone's `PATH`: it ships inside a Python wheel, and
//! `make hyperd` unpacks it into `.hyperd/hyperd` at the repository root. The
//! search order lets a user override everything (explicit option), a CI or
//! shell override the default (`HYPERD_PATH`), and a developer inside the
//! checkout (or any subdirectory, as `cargo test` runs in the crate directory)
//! need no setup at all.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Environment variable naming the hyperd executable, or a directory holding it.
pub const HYPERD_PATH_ENV: &str = "HYPERD_PATH";

/// Where `make hyperd` installs hyperd, relative to the repository root.
const INSTALL_DIR: &str = ".hyperd";
const EXE_NAME: &str = "hyperd";

/// Finds hyperd: `explicit` first, then `$HYPERD_PATH`, then `.hyperd/hyperd`
/// in the current directory or any ancestor.
pub fn find_hyperd(explicit: Option<&Path>) -> Result<PathBuf> {
    let env = std::env::var_os(HYPERD_PATH_ENV);
    let cwd = std::env::current_dir().ok();
    resolve(explicit, env.as_deref(), cwd.as_deref())
}

/// The search itself, with the process-global inputs passed in so it can be
/// tested without touching the environment (tests run in parallel threads).
pub(crate) fn resolve(
    explicit: Option<&Path>,
    env: Option<&OsStr>,
    cwd: Option<&Path>,
) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return executable_at(path).ok_or_else(|| {
            Error::HyperdNotFound(format!(
                "the configured hyperd path `{}` is not an executable file (nor a directory containing `{EXE_NAME}`)",
                path.display()
            ))
        });
    }
    if let Some(value) = env.filter(|v| !v.is_empty()) {
        let path = Path::new(value);
        return executable_at(path).ok_or_else(|| {
            Error::HyperdNotFound(format!(
                "{HYPERD_PATH_ENV}=`{}` is not an executable file (nor a directory containing `{EXE_NAME}`)",
                path.display()
            ))
        });
    }
    if let Some(cwd) = cwd {
        for dir in cwd.ancestors() {
            let candidate = dir.join(INSTALL_DIR).join(EXE_NAME);
            if is_executable_file(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(Error::HyperdNotFound(format!(
        "no `{INSTALL_DIR}/{EXE_NAME}` in the current directory or its parents, and {HYPERD_PATH_ENV} is not set; \
         install it (`make hyperd` in this repository, `npx hyperdb-api-install-hyperd` with the npm package), \
         or set {HYPERD_PATH_ENV} to the hyperd executable"
    )))
}

/// `path` itself if it is an executable file, else `path/hyperd` if that is.
fn executable_at(path: &Path) -> Option<PathBuf> {
    if is_executable_file(path) {
        return Some(path.to_path_buf());
    }
    let inner = path.join(EXE_NAME);
    is_executable_file(&inner).then_some(inner)
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn fake_exe(dir: &Path, rel: &str, mode: u32) -> PathBuf {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        fs::write(&path, b"#!/bin/sh\n").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
        path
    }

    fn not_found_message(r: Result<PathBuf>) -> String {
        match r {
            Err(Error::HyperdNotFound(m)) => m,
            other => panic!("expected HyperdNotFound, got {other:?}"),
        }
    }

    #[test]
    fn explicit_path_wins_over_env_and_tree() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let explicit = fake_exe(tmp.path(), "a/hyperd", 0o755);
        let env = fake_exe(tmp.path(), "b/hyperd", 0o755);
        fake_exe(tmp.path(), ".hyperd/hyperd", 0o755);
        let got = resolve(Some(&explicit), Some(env.as_os_str()), Some(tmp.path())).expect("found");
        assert_eq!(got, explicit);
    }

    #[test]
    fn explicit_directory_is_searched_for_hyperd() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let exe = fake_exe(tmp.path(), "bin/hyperd", 0o755);
        let got = resolve(Some(&tmp.path().join("bin")), None, None).expect("found");
        assert_eq!(got, exe);
    }

    #[test]
    fn bad_explicit_path_names_the_path() {
        let msg = not_found_message(resolve(Some(Path::new("/no/such/hyperd")), None, None));
        assert!(msg.contains("/no/such/hyperd"), "{msg}");
    }

    #[test]
    fn env_file_and_env_directory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let exe = fake_exe(tmp.path(), "x/hyperd", 0o755);
        assert_eq!(
            resolve(None, Some(exe.as_os_str()), None).expect("file"),
            exe
        );
        let dir = tmp.path().join("x");
        assert_eq!(
            resolve(None, Some(dir.as_os_str()), None).expect("dir"),
            exe
        );
    }

    #[test]
    fn env_pointing_at_nothing_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        // Present in the tree, but a set HYPERD_PATH must not silently fall back.
        fake_exe(tmp.path(), ".hyperd/hyperd", 0o755);
        let msg = not_found_message(resolve(
            None,
            Some(OsStr::new("/nope/hyperd")),
            Some(tmp.path()),
        ));
        assert!(
            msg.contains("HYPERD_PATH") && msg.contains("/nope/hyperd"),
            "{msg}"
        );
    }

    #[test]
    fn non_executable_file_is_rejected() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let exe = fake_exe(tmp.path(), "hyperd", 0o644);
        let msg = not_found_message(resolve(None, Some(exe.as_os_str()), None));
        assert!(msg.contains(&exe.display().to_string()), "{msg}");
    }

    #[test]
    fn searches_upward_from_cwd() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let exe = fake_exe(tmp.path(), ".hyperd/hyperd", 0o755);
        let deep = tmp.path().join("a/b/c");
        fs::create_dir_all(&deep).expect("mkdir");
        assert_eq!(
            resolve(None, Some(OsStr::new("")), Some(&deep)).expect("found"),
            exe
        );
    }

    #[test]
    fn nothing_found_tells_how_to_install() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let msg = not_found_message(resolve(None, None, Some(tmp.path())));
        assert!(
            msg.contains("make hyperd") && msg.contains("HYPERD_PATH"),
            "{msg}"
        );
    }
}

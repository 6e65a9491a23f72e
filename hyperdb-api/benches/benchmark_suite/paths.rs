//! Where the suite writes, decided when it runs, never when it was built.
//!
//! The Makefile shares one target directory between clones, so a second
//! clone's `make bench` runs the binary the first clone built. Anything
//! baked in at compile time (`env!("CARGO_MANIFEST_DIR")`) would send the
//! second clone's artifacts into the first clone's `test_results/`; every
//! path here is resolved from the run's environment instead.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::data::Result;

/// Overrides the artifact directory (the Makefile passes its clone's
/// `test_results/`).
pub const OUT_DIR_ENV: &str = "BENCH_OUT_DIR";

/// The repository root of the run: the parent of `cargo run`'s (run-time)
/// `CARGO_MANIFEST_DIR`, else the nearest ancestor of the working directory
/// whose `Cargo.toml` declares a `[workspace]`, else the working directory.
pub fn repo_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    repo_root_from(std::env::var_os("CARGO_MANIFEST_DIR").as_deref(), &cwd)
}

/// [`repo_root`] from explicit inputs (testable without touching the
/// process environment).
pub fn repo_root_from(manifest_dir: Option<&OsStr>, cwd: &Path) -> PathBuf {
    if let Some(dir) = manifest_dir.filter(|d| !d.is_empty()) {
        let crate_dir = PathBuf::from(dir);
        if let Some(root) = workspace_root_above(&crate_dir) {
            return root;
        }
    }
    workspace_root_above(cwd).unwrap_or_else(|| cwd.to_path_buf())
}

/// The nearest of `start` and its ancestors holding a `Cargo.toml` with a
/// `[workspace]` table.
fn workspace_root_above(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        text.lines()
            .any(|line| line.trim() == "[workspace]")
            .then(|| dir.to_path_buf())
    })
}

/// The artifact directory: `$BENCH_OUT_DIR` if set, else the run's
/// `<repo root>/test_results`.
pub fn out_dir() -> PathBuf {
    match std::env::var_os(OUT_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => repo_root().join("test_results"),
    }
}

/// `bench_data/` at the run's repository root (git-ignored), created if
/// missing: where the suite keeps its database files.
pub fn data_dir() -> Result<PathBuf> {
    let dir = repo_root().join("bench_data");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    use super::*;

    /// Set in the child runs of `two_clones_one_binary_each_write_their_own`:
    /// the child writes a marker where the suite would write its report.
    const CHILD_ENV: &str = "BENCH_PATHS_TEST_CHILD";

    /// A fake clone: a workspace `Cargo.toml` and a `hyperdb-api/` member.
    fn clone_at(dir: &Path) {
        std::fs::create_dir_all(dir.join("hyperdb-api/benches")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"hyperdb-api\"]\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("hyperdb-api/Cargo.toml"),
            "[package]\nname = \"hyperdb-api\"\n",
        )
        .unwrap();
    }

    #[test]
    fn root_from_manifest_dir_then_cwd_then_cwd_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        clone_at(&a);
        clone_at(&b);
        let a_crate = a.join("hyperdb-api");
        // cargo run in clone a, whatever the working directory.
        assert_eq!(repo_root_from(Some(a_crate.as_os_str()), &b), a);
        // The binary run directly from deep inside clone b.
        assert_eq!(repo_root_from(None, &b.join("hyperdb-api/benches")), b);
        // An empty CARGO_MANIFEST_DIR counts as unset.
        assert_eq!(repo_root_from(Some(OsStr::new("")), &b), b);
        // Outside any workspace: the working directory.
        let loose = tmp.path().join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        assert_eq!(repo_root_from(None, &loose), loose);
        // A member manifest alone (no [workspace]) is not a root.
        assert_eq!(
            workspace_root_above(&a_crate),
            Some(a.clone()),
            "the member's own Cargo.toml has no [workspace]"
        );
    }

    /// The child half of the next test: resolve as the suite does and write.
    #[test]
    fn child_writes_marker() {
        let Some(tag) = std::env::var_os(CHILD_ENV) else {
            return; // Only meaningful when spawned by the test below.
        };
        let path = out_dir().join("marker.txt");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, tag.to_string_lossy().as_bytes()).unwrap();
        let data = data_dir().unwrap();
        assert!(data.is_dir());
    }

    /// One binary (this test binary, built once) run from two clones, the
    /// way `make bench` in a second clone sharing the target directory runs
    /// the first clone's build: each run writes into its own clone, both as
    /// `cargo run` (CARGO_MANIFEST_DIR) and as a bare binary (working
    /// directory), and `BENCH_OUT_DIR` wins over both.
    #[test]
    fn two_clones_one_binary_each_write_their_own() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        clone_at(&a);
        clone_at(&b);
        let exe = std::env::current_exe().unwrap();
        let run = |cwd: &Path, manifest: Option<&Path>, out: Option<&Path>, tag: &str| {
            let mut cmd = Command::new(&exe);
            cmd.args([
                "--exact",
                "env::paths::tests::child_writes_marker",
                "--quiet",
            ])
            .current_dir(cwd)
            .env(CHILD_ENV, tag)
            .env_remove("CARGO_MANIFEST_DIR")
            .env_remove(OUT_DIR_ENV);
            if let Some(m) = manifest {
                cmd.env("CARGO_MANIFEST_DIR", m);
            }
            if let Some(o) = out {
                cmd.env(OUT_DIR_ENV, o);
            }
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "child run in {} failed: {}{}",
                cwd.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let marker = |root: &Path| std::fs::read_to_string(root.join("test_results/marker.txt"));

        // As `cargo run` would: working directory and manifest in one clone.
        run(&a, Some(&a.join("hyperdb-api")), None, "a-cargo");
        run(&b, Some(&b.join("hyperdb-api")), None, "b-cargo");
        assert_eq!(marker(&a).unwrap(), "a-cargo");
        assert_eq!(marker(&b).unwrap(), "b-cargo");
        assert!(a.join("bench_data").is_dir() && b.join("bench_data").is_dir());

        // The bare binary, from a subdirectory of each clone.
        run(&b.join("hyperdb-api"), None, None, "b-bare");
        assert_eq!(marker(&b).unwrap(), "b-bare");
        assert_eq!(marker(&a).unwrap(), "a-cargo", "clone a untouched");

        // The Makefile's explicit BENCH_OUT_DIR wins.
        let explicit = tmp.path().join("elsewhere");
        run(
            &a,
            Some(&a.join("hyperdb-api")),
            Some(&explicit),
            "explicit",
        );
        assert_eq!(
            std::fs::read_to_string(explicit.join("marker.txt")).unwrap(),
            "explicit"
        );
        assert_eq!(marker(&a).unwrap(), "a-cargo");
    }
}

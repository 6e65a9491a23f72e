//! A temporary directory that only this user can enter, removed on drop.
//!
//! hyperd runs with `--no-password`, so whoever can reach its Unix socket can
//! use it; a directory with mode 0700 around the socket is the access
//! control. Kept here rather than pulling in a temp-dir crate for ~40 lines.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug)]
pub(super) struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Creates `$TMPDIR/hyperdb-<pid>-<unique>` with mode 0700. The name is
    /// kept short because a Unix socket path must fit in 108 bytes.
    pub(super) fn new() -> io::Result<PrivateDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let pid = std::process::id();
        let mut last_err = None;
        for _ in 0..16 {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("hyperdb-{pid}-{n}-{nanos:x}"));
            // `create` (not `create_all`) fails if the name exists, so we never
            // adopt a directory someone else prepared for us.
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    // The umask can only remove bits, but be explicit anyway.
                    fs::set_permissions(&path, fs::Permissions::from_mode(0o700))?;
                    return Ok(PrivateDir { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_err
            .unwrap_or_else(|| io::Error::other("could not create a private temporary directory")))
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.path) {
            if e.kind() != io::ErrorKind::NotFound {
                tracing::debug!(path = %self.path.display(), error = %e, "could not remove temporary directory");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_private_and_removed_on_drop() {
        let dir = PrivateDir::new().expect("create");
        let path = dir.path().to_path_buf();
        let mode = fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        fs::write(path.join("f"), b"x").expect("write");
        let other = PrivateDir::new().expect("create second");
        assert_ne!(other.path(), path);
        drop(dir);
        assert!(!path.exists());
    }
}

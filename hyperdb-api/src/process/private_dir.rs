//! A temporary directory that only this user can enter, removed on drop,
//! and swept away on a later start when its owner died without dropping it.
//!
//! hyperd runs with `--no-password`, so whoever can reach its Unix socket can
//! use it; a directory with mode 0700 around the socket is the access
//! control. Kept here rather than pulling in a temp-dir crate, which would
//! know nothing of the sweep below.
//!
//! A process that is SIGKILLed (or aborts) runs no destructor, so its
//! directory, with hyperd's logs in it, stays behind; hyperd itself exits
//! (see `callback`). [`PrivateDir::new`] therefore first removes such
//! leftovers: directories named like ours (`hyperdb-<pid>-<n>-<hex>`),
//! owned by this user, whose process is gone. "Gone" takes two checks,
//! each of which alone could remove a live process's directory:
//!
//! * the pid in the name has no process (`kill(pid, 0)` fails with
//!   `ESRCH`): a live pid may be a reused one, and the directory then
//!   waits for a later start, which is the safe way to be wrong;
//! * nobody holds the lock on its [`LOCK_FILE`]: each owner holds an
//!   `flock` on it for the directory's lifetime, which the kernel drops
//!   when the process dies. This covers a live owner whose pid means
//!   nothing here (another pid namespace sharing `/tmp`, a container).

use std::fs::{self, DirBuilder, File};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Every private directory's name starts with this.
const PREFIX: &str = "hyperdb-";
/// The file in each private directory whose lock its owner holds.
const LOCK_FILE: &str = ".owner.lock";

#[derive(Debug)]
pub(super) struct PrivateDir {
    path: PathBuf,
    /// Locked while this handle lives (`None` if the lock could not be
    /// taken: the pid in the name is then all a sweep goes by).
    _lock: Option<File>,
}

impl PrivateDir {
    /// Creates `$TMPDIR/hyperdb-<pid>-<unique>` with mode 0700, after
    /// removing the private directories of processes that died.
    pub(super) fn new() -> io::Result<PrivateDir> {
        PrivateDir::new_in(&std::env::temp_dir())
    }

    /// [`PrivateDir::new`] in `base`. The name is kept short because a Unix
    /// socket path must fit in 108 bytes.
    pub(super) fn new_in(base: &Path) -> io::Result<PrivateDir> {
        sweep_stale(base);
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let pid = std::process::id();
        let mut last_err = None;
        for _ in 0..16 {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("{PREFIX}{pid}-{n}-{nanos:x}"));
            // `create` (not `create_all`) fails if the name exists, so we never
            // adopt a directory someone else prepared for us.
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    // Removed again on drop if what follows fails.
                    let mut dir = PrivateDir { path, _lock: None };
                    // The umask can only remove bits, but be explicit anyway.
                    fs::set_permissions(&dir.path, fs::Permissions::from_mode(0o700))?;
                    dir._lock = lock_owner_file(&dir.path);
                    return Ok(dir);
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

/// Creates `dir`'s lock file and locks it; `None` (logged) if either
/// fails: the directory is still usable, a sweep then goes by the pid.
fn lock_owner_file(dir: &Path) -> Option<File> {
    let path = dir.join(LOCK_FILE);
    let locked = File::create_new(&path).and_then(|file| {
        // SAFETY: `flock` only reads the descriptor, which `file` owns and
        // keeps open for the call.
        match unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } {
            0 => Ok(file),
            _ => Err(io::Error::last_os_error()),
        }
    });
    match locked {
        Ok(file) => Some(file),
        Err(e) => {
            tracing::debug!(path = %path.display(), error = %e, "could not lock the private directory");
            None
        }
    }
}

/// The pid in a private directory's name: `hyperdb-<pid>-<n>-<hex>`, all
/// three parts non-empty, decimal, decimal and hexadecimal. `None` for any
/// other name: those are not ours to remove.
fn owner_pid(name: &str) -> Option<u32> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let (pid, n, nanos) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hex = !nanos.is_empty() && nanos.bytes().all(|b| b.is_ascii_hexdigit());
    if parts.next().is_some() || !digits(pid) || !digits(n) || !hex {
        return None;
    }
    pid.parse().ok().filter(|&pid| pid > 0)
}

/// Whether `pid` may be a live process: anything but a clear "no such
/// process" counts as alive (`EPERM` is a live process of another user).
fn may_be_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 sends nothing; `kill` only checks that the process
    // exists and may be signalled.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Whether a process holds `dir`'s owner lock. A directory without a lock
/// file (made before there was one, or by an owner that could not lock)
/// is decided by its pid alone.
fn owner_holds_lock(dir: &Path) -> bool {
    let file = match File::open(dir.join(LOCK_FILE)) {
        Ok(file) => file,
        Err(e) => return e.kind() != io::ErrorKind::NotFound,
    };
    // SAFETY: as in `lock_owner_file`. A lock we get is released when
    // `file` is closed, as the directory is removed.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 }
}

/// Removes the private directories in `base` whose owners are gone (see
/// the module docs). Best effort: nothing here fails a start.
fn sweep_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    let own_pid = std::process::id();
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(owner_pid) else {
            continue;
        };
        if pid == own_pid {
            continue;
        }
        let path = entry.path();
        // Not followed: a symlink named like ours is someone else's.
        let ours = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if !ours || may_be_alive(pid) || owner_holds_lock(&path) {
            continue;
        }
        match fs::remove_dir_all(&path) {
            Ok(()) => {
                tracing::debug!(path = %path.display(), pid, "removed a dead process's private directory")
            }
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "could not remove a stale private directory")
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
        assert!(owner_holds_lock(&path), "the owner holds its lock");
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn only_our_names_carry_a_pid() {
        assert_eq!(owner_pid("hyperdb-123-0-1e8ad61c"), Some(123));
        assert_eq!(owner_pid("hyperdb-9-17-0"), Some(9));
        for other in [
            "hyperdb-test-abc",
            "hyperdb-123-0",
            "hyperdb-123-0-xyz",
            "hyperdb-123-0-ab-cd",
            "hyperdb-0-0-ab",
            "hyperdb--0-ab",
            "hyperdb-99999999999-0-ab",
            "other-123-0-ab",
        ] {
            assert_eq!(owner_pid(other), None, "{other}");
        }
    }

    /// A pid no process has: a child's, once it has been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("reap");
        assert!(!may_be_alive(pid));
        pid
    }

    /// A new directory sweeps away those of dead owners and keeps those of
    /// live ones (by pid, or by the lock when the pid says nothing), and
    /// everything that is not a directory of ours.
    #[test]
    fn new_removes_directories_of_dead_owners_only() {
        let base = tempfile::tempdir().expect("base");
        let dead = dead_pid();
        let dir = |name: String| {
            let path = base.path().join(name);
            fs::create_dir(&path).expect("mkdir");
            fs::write(path.join("hyperd.log"), b"log").expect("write");
            path
        };
        let stale = dir(format!("hyperdb-{dead}-0-ab"));
        let stale_unlocked = dir(format!("hyperdb-{dead}-1-ab"));
        fs::write(stale_unlocked.join(LOCK_FILE), b"").expect("lock file");
        let ours = dir(format!("hyperdb-{}-0-ab", std::process::id()));
        let live = dir(format!(
            "hyperdb-{}-0-ab",
            std::os::unix::process::parent_id()
        ));
        // An owner alive elsewhere (its pid means nothing here) holds its lock.
        let elsewhere = dir(format!("hyperdb-{dead}-2-ab"));
        let held = lock_owner_file(&elsewhere).expect("locked");
        let foreign = [
            dir(format!("hyperdb-{dead}-3-ab-extra")),
            dir(format!("hyperdb-test-{dead}")),
            dir(format!("other-{dead}-0-ab")),
        ];
        let file = base.path().join(format!("hyperdb-{dead}-4-ab"));
        fs::write(&file, b"not a directory").expect("file");
        let target = tempfile::tempdir().expect("symlink target");
        fs::write(target.path().join("keep"), b"x").expect("write");
        let link = base.path().join(format!("hyperdb-{dead}-5-ab"));
        std::os::unix::fs::symlink(target.path(), &link).expect("symlink");

        let new = PrivateDir::new_in(base.path()).expect("create");

        assert!(!stale.exists(), "dead owner, no lock file");
        assert!(!stale_unlocked.exists(), "dead owner, lock not held");
        assert!(ours.exists(), "this process");
        assert!(live.exists(), "live owner");
        assert!(elsewhere.exists(), "lock held");
        for path in &foreign {
            assert!(path.exists(), "{}", path.display());
        }
        assert!(file.is_file());
        assert!(link.is_symlink() && target.path().join("keep").exists());
        assert!(new.path().exists());
        drop(held);
        // Its owner gone, the next start removes it.
        drop(PrivateDir::new_in(base.path()).expect("create"));
        assert!(!elsewhere.exists(), "lock released");
        assert!(new.path().exists(), "ours, while we live");
    }
}

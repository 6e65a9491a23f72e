//! Starting and stopping a local `hyperd`.
//!
//! Hyper is a server, but users think of it as a library: they want a
//! database file, not a daemon to manage. [`HyperProcess`] therefore ties the
//! server's lifetime to the handle: the server stops when the handle is
//! dropped, and also when this process dies without running any destructor
//! (see the `callback` module for how).

mod callback;
mod discover;
mod grpc_listen;
mod options;
mod password;
mod private_dir;

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::time::{Duration, Instant};

pub use options::{HyperProcessOptions, Listen, DEFAULT_DATABASE_VERSION, DEFAULT_HYPERD_PARAMS};

use crate::error::{Error, Result};
use crate::{Config, ConnectOptions, Endpoint, SslMode};
use callback::{CallbackListener, WaitError};
use private_dir::PrivateDir;

/// File in the log directory that receives hyperd's stdout and stderr. A file
/// rather than pipes: nobody reads pipes after start, and a full pipe would
/// block hyperd the next time it writes.
const OUTPUT_FILE: &str = "hyperd.out";
/// Name of the Unix socket inside the private directory.
const UNIX_SOCKET_NAME: &str = "pgsql";
/// `sun_path` is 108 bytes on Linux, including the terminating NUL.
const MAX_UNIX_PATH: usize = 107;
/// How long `Drop` lets hyperd shut down cleanly before killing it.
const DROP_TIMEOUT: Duration = Duration::from_secs(5);
/// How much of hyperd's output a start error quotes.
const TAIL_BYTES: u64 = 4096;
const POLL: Duration = Duration::from_millis(5);

/// A running `hyperd`, stopped when this handle is dropped.
///
/// ```no_run
/// use hyperdb_api::{Connection, CreateMode, HyperProcess};
/// let server = HyperProcess::start()?;
/// let mut conn = Connection::connect_with(
///     &server
///         .connect_options()
///         .with_database("example.hyper", CreateMode::CreateIfNotExists),
/// )?;
/// # Ok::<(), hyperdb_api::Error>(())
/// ```
///
/// By default the server listens on a Unix socket that only this user can
/// reach, and needs no password; a TCP server requires one. See [`Listen`]
/// for the trade-off.
///
/// If this process dies without dropping the handle (a panic with
/// `panic = "abort"`, SIGKILL, a `static` that is never dropped), hyperd
/// notices its callback connection closing and exits by itself, and the
/// next `HyperProcess` to start (in any process of the same user) removes
/// the temporary directory the dead one left.
pub struct HyperProcess {
    child: Child,
    pid: u32,
    endpoint: Endpoint,
    grpc_endpoint: Option<String>,
    /// What hyperd requires of clients: given, or generated for TCP.
    password: Option<String>,
    hyperd: PathBuf,
    log_dir: PathBuf,
    /// Held only to be closed: hyperd exits when it reads EOF here.
    callback: Option<TcpStream>,
    /// `Some` when started with TLS: the root PEM `config` trusts, if given.
    tls: Option<Option<Vec<u8>>>,
    stopped: bool,
    /// Declared last so it is removed after the server has stopped.
    _temp: PrivateDir,
}

impl HyperProcess {
    /// Starts hyperd with default options: found as described in
    /// [`find_hyperd`](HyperProcess::find_hyperd), listening where
    /// [`Listen::default`] says (a Unix socket in a private directory on
    /// Unix).
    pub fn start() -> Result<HyperProcess> {
        HyperProcess::new(HyperProcessOptions::default())
    }

    /// Starts hyperd and waits until it accepts connections.
    pub fn new(options: HyperProcessOptions) -> Result<HyperProcess> {
        // Everything that can be checked without side effects comes first.
        let params = options.param_args()?;
        let tls = server_tls(&options)?;
        let hyperd = discover::find_hyperd(options.hyperd.as_deref())?;

        // One private directory holds the Unix socket and the default logs.
        // Created even when neither is needed: one mkdir keeps the paths simple.
        // Creating it removes those of owners that died without cleaning up.
        let temp = PrivateDir::new()
            .map_err(|e| Error::io("creating a private temporary directory", e))?;
        let log_dir = match &options.log_dir {
            Some(dir) => {
                fs::create_dir_all(dir).map_err(|e| {
                    Error::io(format!("creating log directory {}", dir.display()), e)
                })?;
                dir.clone()
            }
            None => temp.path().to_path_buf(),
        };
        let mut listen = listen_descriptor(options.listen, temp.path())?;
        if options.grpc && options.listen != Listen::Grpc {
            listen.push(',');
            listen.push_str(grpc_listen::GRPC_LISTEN);
        }

        let callback = CallbackListener::bind()
            .map_err(|e| Error::io("binding the hyperd callback listener", e))?;
        let output_path = log_dir.join(OUTPUT_FILE);
        let (output, output_start) = open_output(&output_path)?;
        let stderr = output
            .try_clone()
            .map_err(|e| Error::io("duplicating the hyperd output file", e))?;

        let mut command = Command::new(&hyperd);
        command
            .arg("run")
            .arg(format!("--init-user={}", Config::DEFAULT_USER))
            .arg("--skip-license")
            .arg(os_arg("--log-dir=", &log_dir))
            .arg("--listen-connection")
            .arg(&listen)
            .arg("--callback-connection")
            .arg(callback.descriptor())
            .args(&params)
            .args(tls.iter().flat_map(|t| t.args.iter()))
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(stderr)
            // hyperd keeps persisted gRPC results (`shared_storage_<pid>_*`,
            // 3 days by default) in its temporary directory and may leave
            // them behind when it exits: in the private directory they go
            // with the server, or with the next start's sweep.
            .env("TMPDIR", temp.path());

        // hyperd takes the initial password from the environment (never the
        // command line, where `ps` would show it; another user cannot read
        // our process's environment).
        let password = match options.password.clone() {
            Some(pw) if pw.is_empty() => {
                return Err(Error::invalid_argument(
                    "password",
                    "hyperd refuses an empty password",
                ))
            }
            Some(pw) => Some(pw),
            // Loopback TCP is open to every local account (see `Listen`).
            // Not beside gRPC: hyperd's gRPC takes only trusted sessions
            // (with a password, every call fails with 42501), and its port
            // is open to every local account anyway.
            None if options.listen == Listen::Tcp && !options.grpc() => Some(password::generate()?),
            None => None,
        };
        match &password {
            Some(pw) => command.env("HYPER_INITIAL_USER_PASSWORD", pw),
            None => command.arg("--no-password"),
        };

        let started = Instant::now();
        let start_error = |message: String| Error::ProcessStart {
            path: hyperd.clone(),
            message: with_output_tail(message, &output_path, output_start),
        };
        let mut child = command.spawn().map_err(|e| Error::ProcessStart {
            path: hyperd.clone(),
            message: format!("could not run it: {e}"),
        })?;

        let (stream, descriptor) = match callback.accept(&mut child, options.start_timeout) {
            Ok(ok) => ok,
            Err(e) => {
                kill_and_reap(&mut child);
                return Err(start_error(match e {
                    WaitError::Exited(status) => {
                        format!("hyperd exited ({status}) before it was ready")
                    }
                    WaitError::TimedOut => {
                        format!("hyperd was not ready within {:?}", options.start_timeout)
                    }
                    WaitError::Io(e) => format!("reading hyperd's callback: {e}"),
                }));
            }
        };
        let grpc_endpoint = if let Some(uri) = grpc_listen::uri_from_descriptor(&descriptor) {
            Ok(Some(uri))
        } else if options.grpc() {
            grpc_listen::uri_from_output(&output_path, output_start).map(Some)
        } else {
            Ok(None)
        };
        let grpc_endpoint = match grpc_endpoint {
            Ok(uri) => uri,
            Err(message) => {
                kill_and_reap(&mut child);
                return Err(start_error(message));
            }
        };
        let pg_descriptor = descriptor.strip_prefix(grpc_listen::GRPC_SCHEME);
        let endpoint = match Endpoint::from_str(pg_descriptor.unwrap_or(&descriptor)) {
            Ok(Endpoint::Unix(path)) if !path.exists() => Err(format!(
                "hyperd reported `{descriptor}` but there is no socket at {}",
                path.display()
            )),
            Ok(endpoint) => Ok(endpoint),
            Err(e) => Err(format!(
                "hyperd reported an unusable endpoint `{descriptor}`: {e}"
            )),
        };
        let endpoint = match endpoint {
            Ok(endpoint) => endpoint,
            Err(message) => {
                kill_and_reap(&mut child);
                return Err(start_error(message));
            }
        };

        let pid = child.id();
        tracing::debug!(pid, %endpoint, elapsed = ?started.elapsed(), "hyperd started");
        Ok(HyperProcess {
            child,
            pid,
            endpoint,
            grpc_endpoint,
            password,
            hyperd,
            log_dir,
            callback: Some(stream),
            tls: tls.map(|t| t.root),
            stopped: false,
            _temp: temp,
        })
    }

    /// The hyperd executable [`HyperProcess::start`] would use: the
    /// `HYPERD_PATH` environment variable (a file, or a directory containing
    /// `hyperd`), else `.hyperd/hyperd` in the current directory or the
    /// nearest parent that has one (where `make hyperd` puts it).
    pub fn find_hyperd() -> Result<PathBuf> {
        discover::find_hyperd(None)
    }

    /// Where the server accepts connections, as hyperd reported it (the real
    /// port for TCP, the socket file for Unix).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Where the server accepts gRPC, as `http://127.0.0.1:PORT`, when it
    /// was started with [`HyperProcessOptions::with_grpc`] or
    /// [`Listen::Grpc`].
    pub fn grpc_endpoint(&self) -> Option<&str> {
        self.grpc_endpoint.as_deref()
    }

    /// A connection config for this server, with the user it was started
    /// with, the password it requires, if any, and for a server started
    /// with [`HyperProcessOptions::with_tls`]: [`SslMode::VerifyFull`],
    /// trusting the [root certificate](HyperProcessOptions::with_tls_root_certificate)
    /// if one was given, else the system's roots.
    ///
    /// ```no_run
    /// use hyperdb_api::{Connection, ConnectOptions, CreateMode, HyperProcess, HyperProcessOptions};
    /// let server = HyperProcess::new(
    ///     HyperProcessOptions::default()
    ///         .with_tls("server.pem", "server.key")
    ///         .with_tls_root_certificate("ca.pem"),
    /// )?;
    /// let options = ConnectOptions::from(server.config())
    ///     .with_database("example.hyper", CreateMode::CreateIfNotExists);
    /// let conn = Connection::connect_with(&options)?;
    /// assert!(conn.tls_info().is_some());
    /// # Ok::<(), hyperdb_api::Error>(())
    /// ```
    pub fn config(&self) -> Config {
        let mut config = Config::new(self.endpoint.clone());
        if let Some(pw) = &self.password {
            config = config.with_password(pw.as_str());
        }
        match &self.tls {
            None => config,
            Some(root) => {
                let config = config.with_ssl_mode(SslMode::VerifyFull);
                match root {
                    Some(pem) => config.with_root_certificate(pem.clone()),
                    None => config,
                }
            }
        }
    }

    /// Whether the server was started with TLS
    /// ([`HyperProcessOptions::with_tls`]).
    pub fn tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Options to connect to this server (no database yet: add one with
    /// [`ConnectOptions::with_database`]), carrying the password it
    /// requires, if any, and its TLS settings ([`config`](Self::config)):
    /// the way to connect whatever [`Listen`] it uses.
    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions::from(self.config())
    }

    /// The password hyperd requires: the one given to
    /// [`HyperProcessOptions::with_password`], else the generated one of a
    /// [`Listen::Tcp`] server, else `None`: a Unix socket server, which
    /// trusts whoever can reach its private directory, or one with gRPC
    /// (see [`HyperProcessOptions::with_grpc`]). For handing to a client
    /// that does not take [`config`](Self::config).
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// hyperd's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Where `hyperd.log` and `hyperd.out` are written.
    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    /// The executable that was started.
    pub fn hyperd_path(&self) -> &Path {
        &self.hyperd
    }

    /// Whether hyperd is still running (it may have crashed, or been stopped).
    pub fn is_running(&mut self) -> bool {
        !self.stopped && matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops hyperd, letting it finish cleanly for up to `timeout` (open
    /// transactions are rolled back, files are closed), then kills it.
    ///
    /// Fails only if the process could not be stopped or reaped.
    pub fn shutdown(mut self, timeout: Duration) -> Result<()> {
        self.stop(timeout)
    }

    /// Asks nicely twice, then insists: closing the callback is hyperd's own
    /// shutdown path (the same one it takes when we die), SIGTERM covers a
    /// hyperd that somehow missed the EOF, SIGKILL covers a hung one.
    fn stop(&mut self, timeout: Duration) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let deadline = Instant::now() + timeout;
        drop(self.callback.take());
        if self.wait_until(Instant::now() + timeout / 2)? {
            return Ok(());
        }
        // SAFETY: `kill` has no memory-safety preconditions. The pid is our
        // own child, which has not been reaped (we still hold `Child` and only
        // `wait_until` above reaps it, having returned false), so it cannot
        // have been reused by another process.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGTERM);
        }
        if self.wait_until(deadline)? {
            return Ok(());
        }
        tracing::warn!(
            pid = self.pid,
            ?timeout,
            "hyperd did not stop in time; killing it"
        );
        let context = || format!("killing hyperd (pid {})", self.pid);
        match self.child.kill() {
            Ok(()) => {}
            // Exited between the last poll and the kill: `wait` reaps it.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {}
            Err(e) => return Err(Error::io(context(), e)),
        }
        self.child.wait().map_err(|e| Error::io(context(), e))?;
        Ok(())
    }

    /// Polls until the child has exited (true, reaped) or `deadline` passes.
    fn wait_until(&mut self, deadline: Instant) -> Result<bool> {
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return Ok(true),
                Ok(None) => {}
                Err(e) => {
                    return Err(Error::io(
                        format!("waiting for hyperd (pid {})", self.pid),
                        e,
                    ))
                }
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for HyperProcess {
    fn drop(&mut self) {
        if let Err(e) = self.stop(DROP_TIMEOUT) {
            tracing::warn!(pid = self.pid, error = %e, "could not stop hyperd");
        }
    }
}

impl fmt::Debug for HyperProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HyperProcess")
            .field("pid", &self.pid)
            .field("endpoint", &self.endpoint)
            .field("grpc_endpoint", &self.grpc_endpoint)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("hyperd", &self.hyperd)
            .field("log_dir", &self.log_dir)
            .field("stopped", &self.stopped)
            .finish_non_exhaustive()
    }
}

/// What [`HyperProcessOptions::with_tls`] adds to the command line, and
/// the root certificate `config` will trust.
struct TlsStart {
    args: Vec<OsString>,
    root: Option<Vec<u8>>,
}

fn server_tls(options: &HyperProcessOptions) -> Result<Option<TlsStart>> {
    let Some(tls) = &options.tls else {
        if options.tls_root.is_some() {
            return Err(Error::invalid_argument(
                "tls_root_certificate",
                "given without with_tls: the server would not use TLS",
            ));
        }
        return Ok(None);
    };
    if options.listen != Listen::Tcp {
        return Err(Error::invalid_argument(
            "listen",
            format!(
                "{:?} with with_tls: hyperd serves TLS over TCP only; use Listen::Tcp",
                options.listen
            ),
        ));
    }
    let root = match &options.tls_root {
        None => None,
        Some(path) => Some(fs::read(path).map_err(|e| {
            Error::io(
                format!("reading the TLS root certificate {}", path.display()),
                e,
            )
        })?),
    };
    Ok(Some(TlsStart {
        args: vec![
            os_arg("--ssl-certificate=", &tls.certificate_chain),
            os_arg("--ssl-key=", &tls.private_key),
        ],
        root,
    }))
}

/// The `--listen-connection` value for `listen`.
fn listen_descriptor(listen: Listen, private_dir: &Path) -> Result<String> {
    match listen {
        Listen::Tcp => Ok("tab.tcp://127.0.0.1:0".to_owned()),
        Listen::Grpc => Ok(grpc_listen::GRPC_LISTEN.to_owned()),
        Listen::Unix => {
            let dir = private_dir;
            let socket = dir.join(UNIX_SOCKET_NAME);
            let dir = dir
                .to_str()
                .filter(|_| socket.as_os_str().len() <= MAX_UNIX_PATH);
            let dir = dir.ok_or_else(|| {
                Error::invalid_argument(
                    "TMPDIR",
                    format!(
                        "the Unix socket path {} must be UTF-8 and at most {MAX_UNIX_PATH} bytes; \
                         point TMPDIR at a shorter directory",
                        socket.display()
                    ),
                )
            })?;
            // hyperd serves `tab.domain://DIR/domain/NAME` at DIR/NAME.
            Ok(format!("tab.domain://{dir}/domain/{UNIX_SOCKET_NAME}"))
        }
    }
}

/// Opens the output file for appending (a log directory may be reused) and
/// returns where this run's output starts.
fn open_output(path: &Path) -> Result<(File, u64)> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    let start = file
        .metadata()
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?
        .len();
    Ok((file, start))
}

/// `message`, followed by the end of what hyperd printed during this run.
/// The file's path is left out: with the default log directory it is gone
/// by the time the caller reads the error.
fn with_output_tail(message: String, path: &Path, start: u64) -> String {
    let tail = (|| -> io::Result<String> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(start.max(len.saturating_sub(TAIL_BYTES))))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).trim().to_owned())
    })();
    match tail {
        Ok(tail) if !tail.is_empty() => format!("{message}; hyperd output:\n{tail}"),
        Ok(_) => format!("{message}; hyperd printed nothing"),
        Err(e) => format!("{message}; could not read hyperd output: {e}"),
    }
}

/// `prefix` followed by `path`, without a lossy round trip through UTF-8.
fn os_arg(prefix: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(prefix);
    arg.push(path);
    arg
}

/// Best effort cleanup of a child that failed to start.
fn kill_and_reap(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

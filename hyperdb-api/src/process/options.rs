//! How to start hyperd: which executable, where it listens, which settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};

/// Settings that [`HyperProcess`](super::HyperProcess) passes itself. Letting
/// a user override them would break what the process handle promises: the
/// callback is what keeps hyperd from outliving us, the listen descriptor is
/// what [`endpoint`](super::HyperProcess::endpoint) reports, and the user and
/// password flags are what [`Config::new`](crate::Config::new) assumes.
const RESERVED: &[&str] = &[
    "listen_connection",
    "callback_connection",
    "init_user",
    "log_dir",
    "no_password",
    "skip_license",
];

/// Settings [`HyperProcessOptions::with_tls`] passes, so that
/// [`HyperProcess::config`](super::HyperProcess::config) knows TLS is on.
const TLS_SETTINGS: &[&str] = &["ssl_certificate", "ssl_key"];

/// Where the started hyperd accepts connections.
///
/// hyperd trusts whoever reaches its listener as the user who started it:
/// that client can read and write every file this user can. So the
/// default is the listener only this user can reach: [`Listen::Unix`] on
/// Unix platforms, [`Listen::Tcp`] (with a generated password) elsewhere.
///
/// | listener | who can connect | password |
/// |---|---|---|
/// | [`Listen::Unix`] (default on Unix) | processes of this user (and root): the socket sits in a mode 0700 directory | none needed, unless [`HyperProcessOptions::with_password`] |
/// | [`Listen::Tcp`] | any process on this machine that knows the password | generated unless given; [`HyperProcess::config`](super::HyperProcess::config) carries it |
/// | [`Listen::Grpc`], [`HyperProcessOptions::with_grpc`] | any process on this machine | none: hyperd's gRPC takes only trusted sessions, so a server with gRPC runs without a password, its TCP listener too; use it only where every local account is trusted |
///
/// TCP is one option away (`.with_listen(Listen::Tcp)`) for clients that
/// cannot use a Unix socket; connect with
/// [`HyperProcess::connect_options`](super::HyperProcess::connect_options)
/// or [`HyperProcess::config`](super::HyperProcess::config), which carry
/// the password, or hand [`HyperProcess::password`](super::HyperProcess::password)
/// to the other client. `Connection::connect(server.endpoint(), ..)`, which
/// sends none, works only with the Unix socket's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Listen {
    /// TCP on 127.0.0.1, on a free port that hyperd picks (no port races
    /// between parallel servers). Loopback keeps other machines out, not
    /// other accounts on this one: hyperd therefore requires a password,
    /// the one given to [`HyperProcessOptions::with_password`] or else 256
    /// random bits generated at start
    /// ([`HyperProcess::password`](super::HyperProcess::password)); not
    /// beside [`HyperProcessOptions::with_grpc`], see there. Each
    /// connection then pays a SCRAM-SHA-256 exchange (measured: about
    /// 1 ms more per connect). The default where there are no Unix
    /// sockets.
    #[cfg_attr(not(unix), default)]
    Tcp,
    /// A Unix domain socket in a fresh directory only this user can enter
    /// (mode 0700, checked by a test): the directory permission is the
    /// access control, so hyperd runs without a password and connections
    /// skip authentication. The directory is removed when the
    /// [`HyperProcess`](super::HyperProcess) is dropped. The default on Unix.
    #[cfg_attr(unix, default)]
    Unix,
    /// Only gRPC (`tcp.grpc://`), on 127.0.0.1 on a free port hyperd picks.
    /// [`HyperProcess::grpc_endpoint`](super::HyperProcess::grpc_endpoint)
    /// is where to connect; [`HyperProcess::endpoint`](super::HyperProcess::endpoint)
    /// then names the same TCP port, which speaks no PostgreSQL protocol.
    /// hyperd's gRPC interface takes only trusted sessions: every local
    /// account can use it.
    Grpc,
}

/// The `.hyper` file format this crate creates by default: version 4, the
/// first that stores every type we support (NUMERIC up to precision 38 needs
/// 3, REAL needs 4). Tableau Desktop/Server/Prep open version 4 from 2024.3
/// on; pass [`HyperProcessOptions::with_default_database_version`] `(2)` for
/// files that Tableau 2020.4.15+ must open (then no NUMERIC over precision 18
/// and no REAL), or `(3)` for 2022.4.1+ (Server 2023.1+).
pub const DEFAULT_DATABASE_VERSION: u32 = 4;

/// The hyperd settings a [`HyperProcessOptions::default`] starts with,
/// besides `default_database_version` ([`DEFAULT_DATABASE_VERSION`]):
/// `date_style = MDY` and `date_style_lenient = false`, as Tableau's own
/// Hyper API starts hyperd, so text parsed as a date or timestamp must
/// match a known layout exactly. hyperd's lenient default reads `-1-01-01`
/// as 2001-01-01 and accepts `2020/1/2` and `2020-01-02 BC`; the strict
/// style refuses them (SQLSTATE 22P02), as Tableau's API does.
pub const DEFAULT_HYPERD_PARAMS: [(&str, &str); 2] =
    [("date_style", "MDY"), ("date_style_lenient", "false")];

/// Options for [`HyperProcess::new`](super::HyperProcess::new), as a
/// consuming builder.
///
/// ```no_run
/// use hyperdb_api::{HyperProcess, HyperProcessOptions, Listen};
/// let server = HyperProcess::new(
///     HyperProcessOptions::default()
///         .with_listen(Listen::Tcp)
///         .with_default_database_version(2),
/// )?;
/// // Carries the generated password that TCP requires.
/// let options = server.connect_options();
/// # Ok::<(), hyperdb_api::Error>(())
/// ```
#[derive(Clone)]
pub struct HyperProcessOptions {
    pub(super) hyperd: Option<PathBuf>,
    pub(super) password: Option<String>,
    pub(super) listen: Listen,
    pub(super) grpc: bool,
    pub(super) params: BTreeMap<String, String>,
    pub(super) log_dir: Option<PathBuf>,
    pub(super) start_timeout: Duration,
    pub(super) tls: Option<ServerTls>,
    pub(super) tls_root: Option<PathBuf>,
}

/// The files of [`HyperProcessOptions::with_tls`].
#[derive(Clone, Debug)]
pub(super) struct ServerTls {
    pub(super) certificate_chain: PathBuf,
    pub(super) private_key: PathBuf,
}

impl Default for HyperProcessOptions {
    fn default() -> Self {
        HyperProcessOptions {
            hyperd: None,
            password: None,
            listen: Listen::default(),
            grpc: false,
            params: DEFAULT_HYPERD_PARAMS
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .chain([(
                    "default_database_version".to_owned(),
                    DEFAULT_DATABASE_VERSION.to_string(),
                )])
                .collect(),
            log_dir: None,
            start_timeout: Duration::from_secs(30),
            tls: None,
            tls_root: None,
        }
    }
}

impl std::fmt::Debug for HyperProcessOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HyperProcessOptions")
            .field("hyperd", &self.hyperd)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("listen", &self.listen)
            .field("grpc", &self.grpc)
            .field("params", &self.params)
            .field("log_dir", &self.log_dir)
            .field("start_timeout", &self.start_timeout)
            .field("tls", &self.tls)
            .field("tls_root", &self.tls_root)
            .finish()
    }
}

impl HyperProcessOptions {
    /// Requires this password for the initial user (hyperd then asks
    /// clients for SCRAM-SHA-256), on any listener. Without it a TCP
    /// hyperd gets a generated password and a Unix-socket hyperd runs with
    /// `--no-password`, its private directory keeping other users out (see
    /// [`Listen`]).
    pub fn with_password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// The hyperd executable (or a directory containing `hyperd`). Without it,
    /// `$HYPERD_PATH` and then `.hyperd/hyperd` in the current directory or
    /// its parents are tried.
    pub fn with_hyperd_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.hyperd = Some(path.into());
        self
    }

    /// Where hyperd listens (default: [`Listen::Unix`] on Unix, see
    /// [`Listen`] for who can connect to each).
    pub fn with_listen(mut self, listen: Listen) -> Self {
        self.listen = listen;
        self
    }

    /// Also listens for gRPC (`tcp.grpc://127.0.0.1`, a free port hyperd
    /// picks), beside the PostgreSQL-protocol listener; see
    /// [`HyperProcess::grpc_endpoint`](super::HyperProcess::grpc_endpoint).
    /// hyperd's gRPC takes only trusted sessions (measured on hyperd
    /// 0.0.26963: with a password on the initial user every gRPC call
    /// fails with SQLSTATE 42501, "gRPC connections only support trusted
    /// authentication"). So any local account can use this listener, and
    /// a [`Listen::Tcp`] server with gRPC gets no generated password (its
    /// TCP listener is as open as the gRPC one); a password given with
    /// [`Self::with_password`] leaves gRPC unusable.
    ///
    /// Sets, unless they were set with [`Self::with_param`]:
    /// `grpc_threads` (the number of CPUs), `grpc_persist_results` (`false`:
    /// see below), and
    /// `grpc_service_roles` mapping gRPC calls to the initial user. Measured
    /// on hyperd 0.0.26963: by default gRPC sessions run as user `""`,
    /// which may not open database files the initial user created
    /// (SQLSTATE 42501 "access denied" for every attached database).
    ///
    /// Results are not persisted: with `grpc_persist_results` hyperd writes
    /// every gRPC result to disk, SYNC ones too (LZ4-compressed, kept for
    /// `query_result_storage_lifetime`, three days by default). Measured on
    /// hyperd 0.0.26963, a 10M-row SYNC `query_arrow` took 0.37 s median
    /// with it (runs up to 0.99 s, ~5 GB written by a short bench run)
    /// and 0.18 s without (0.16-0.20 s, 0.3 GB). The ASYNC and ADAPTIVE
    /// transfer modes fetch results back from that storage: for them, pass
    /// `.with_param("grpc_persist_results", "true")`; without it they fail
    /// on a result larger than one chunk with SQLSTATE 55000, naming the
    /// setting.
    pub fn with_grpc(mut self) -> Self {
        self.grpc = true;
        self
    }

    /// Whether hyperd listens for gRPC ([`Self::with_grpc`] or [`Listen::Grpc`]).
    pub fn grpc(&self) -> bool {
        self.grpc || self.listen == Listen::Grpc
    }

    /// A hyperd setting, passed as `--name=value` (with `_` in the name written
    /// as `-`, the spelling hyperd documents). `name` is the setting's name as
    /// `hyperd --settings` lists it: ASCII lowercase letters, digits and `_`.
    /// Names are checked when the server starts; setting a name twice keeps
    /// the last value. hyperd refuses to start on settings it does not know.
    pub fn with_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.params.insert(name.into(), value.into());
        self
    }

    /// Serves the PostgreSQL protocol over TLS: hyperd gets the PEM files
    /// `certificate_chain` (the server's certificate first, then any
    /// intermediates) and `private_key` as `ssl_certificate` / `ssl_key`.
    /// [`HyperProcess::config`](super::HyperProcess::config) then connects
    /// with [`SslMode::VerifyFull`](crate::SslMode::VerifyFull), trusting
    /// [`Self::with_tls_root_certificate`] (or the system's roots), so the
    /// certificate must name `127.0.0.1`, where the server listens (or set
    /// [`Config::with_tls_server_name`](crate::Config::with_tls_server_name)
    /// on that config).
    ///
    /// TLS needs TCP, so this also selects [`Listen::Tcp`]; another
    /// listener chosen after it fails the start. hyperd 0.0.26963 speaks
    /// only TLS 1.3 with P-256 key exchange, refuses to start on a missing,
    /// expired or mismatched certificate or key, or a key file whose mode
    /// is not 0600, and still accepts plain
    /// TCP clients unless started with `with_param("ssl_force", "1")`,
    /// which refuses every plain TCP client, loopback ones too (SQLSTATE
    /// 08000); all measured. It asks for no client certificate.
    pub fn with_tls(
        mut self,
        certificate_chain: impl Into<PathBuf>,
        private_key: impl Into<PathBuf>,
    ) -> Self {
        self.tls = Some(ServerTls {
            certificate_chain: certificate_chain.into(),
            private_key: private_key.into(),
        });
        self.listen = Listen::Tcp;
        self
    }

    /// The CA certificate (a PEM file) that
    /// [`HyperProcess::config`](super::HyperProcess::config) trusts for the
    /// certificate of [`Self::with_tls`]; read when the server starts.
    pub fn with_tls_root_certificate(mut self, pem_file: impl Into<PathBuf>) -> Self {
        self.tls_root = Some(pem_file.into());
        self
    }

    /// Whether hyperd serves TLS ([`Self::with_tls`]).
    pub fn tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The file-format version of newly created `.hyper` files
    /// (`default_database_version`). Older Tableau releases open only older
    /// versions, so pin this when the files are meant for them.
    pub fn with_default_database_version(self, version: u32) -> Self {
        self.with_param("default_database_version", version.to_string())
    }

    /// Where hyperd writes `hyperd.log` and where its stdout/stderr go
    /// (`hyperd.out`). Kept after the server stops. Without it a private
    /// temporary directory is used and removed when the handle is dropped.
    pub fn with_log_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.log_dir = Some(dir.into());
        self
    }

    /// How long to wait for hyperd to report that it is listening (30 s by
    /// default; a cold start takes well under a second).
    pub fn with_start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    pub fn hyperd_path(&self) -> Option<&Path> {
        self.hyperd.as_deref()
    }

    pub fn listen(&self) -> Listen {
        self.listen
    }

    pub fn log_dir(&self) -> Option<&Path> {
        self.log_dir.as_deref()
    }

    pub fn start_timeout(&self) -> Duration {
        self.start_timeout
    }

    /// The user settings as hyperd arguments, after checking every name and
    /// value so that a typo fails here with the offending name rather than as
    /// hyperd's less specific complaint.
    pub(super) fn param_args(&self) -> Result<Vec<String>> {
        let mut params = self.params.clone();
        if self.grpc() {
            let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
            params
                .entry("grpc_threads".to_owned())
                .or_insert_with(|| threads.to_string());
            params
                .entry("grpc_persist_results".to_owned())
                .or_insert_with(|| "false".to_owned());
            params
                .entry("grpc_service_roles".to_owned())
                .or_insert_with(|| {
                    format!(
                        r#"{{"default": {{"user": "{}", "authorizations": []}}}}"#,
                        crate::Config::DEFAULT_USER
                    )
                });
        }
        params
            .iter()
            .map(|(name, value)| {
                validate_param(name, value)?;
                Ok(format!("--{}={value}", name.replace('_', "-")))
            })
            .collect()
    }
}

fn validate_param(name: &str, value: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(Error::invalid_argument(
            name,
            "hyperd setting names are non-empty and use only ASCII lowercase letters, digits and `_`",
        ));
    }
    if TLS_SETTINGS.contains(&name) {
        return Err(Error::invalid_argument(
            name,
            "set the TLS certificate and key with HyperProcessOptions::with_tls, \
             so that HyperProcess::config connects with TLS",
        ));
    }
    if RESERVED.contains(&name) {
        return Err(Error::invalid_argument(
            name,
            "this hyperd setting is managed by HyperProcess and cannot be overridden",
        ));
    }
    if value.contains('\0') {
        return Err(Error::invalid_argument(
            name,
            "the value contains a NUL byte",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(opts: HyperProcessOptions) -> (String, String) {
        match opts.param_args() {
            Err(Error::InvalidArgument { what, message }) => (what, message),
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn params_render_sorted_with_dashes() {
        let args = HyperProcessOptions::default()
            .with_param("log_config", "")
            .with_default_database_version(1)
            .param_args()
            .expect("valid");
        assert_eq!(
            args,
            [
                "--date-style=MDY",
                "--date-style-lenient=false",
                "--default-database-version=1",
                "--log-config="
            ]
        );
        // The date style defaults yield to the caller's.
        let args = HyperProcessOptions::default()
            .with_param("date_style_lenient", "true")
            .param_args()
            .expect("valid");
        assert!(
            args.contains(&"--date-style-lenient=true".to_owned()),
            "{args:?}"
        );
        assert!(
            !args.contains(&"--date-style-lenient=false".to_owned()),
            "{args:?}"
        );
    }

    #[test]
    fn bad_names_are_rejected_by_name() {
        for bad in ["", "Foo", "foo-bar", "foo bar", "a=b", "été"] {
            let (what, _) = rejected(HyperProcessOptions::default().with_param(bad, "1"));
            assert_eq!(what, bad);
        }
    }

    #[test]
    fn reserved_names_are_rejected_by_name() {
        for name in RESERVED {
            let (what, message) = rejected(HyperProcessOptions::default().with_param(*name, "x"));
            assert_eq!(what, *name);
            assert!(message.contains("managed by HyperProcess"), "{message}");
        }
    }

    #[test]
    fn grpc_adds_its_settings_unless_given() {
        let args = HyperProcessOptions::default()
            .with_grpc()
            .with_param("grpc_threads", "3")
            .param_args()
            .expect("valid");
        assert!(args.contains(&"--grpc-threads=3".to_owned()), "{args:?}");
        assert!(args.contains(&"--grpc-persist-results=false".to_owned()));
        assert!(args.contains(
            &r#"--grpc-service-roles={"default": {"user": "tableau_internal_user", "authorizations": []}}"#
                .to_owned()
        ));
        let persisted = HyperProcessOptions::default()
            .with_grpc()
            .with_param("grpc_persist_results", "true")
            .param_args()
            .expect("valid");
        assert!(persisted.contains(&"--grpc-persist-results=true".to_owned()));
        assert!(!persisted.contains(&"--grpc-persist-results=false".to_owned()));
        let plain = HyperProcessOptions::default().param_args().expect("valid");
        assert!(!plain.iter().any(|a| a.starts_with("--grpc")));
    }

    /// Issue 18, defect 5: the default listener is the one other local
    /// accounts cannot reach.
    #[test]
    fn default_listener_is_the_private_one() {
        #[cfg(unix)]
        assert_eq!(Listen::default(), Listen::Unix);
        #[cfg(not(unix))]
        assert_eq!(Listen::default(), Listen::Tcp);
        assert_eq!(HyperProcessOptions::default().listen(), Listen::default());
    }

    #[test]
    fn tls_files_go_through_with_tls() {
        for name in TLS_SETTINGS {
            let (what, message) = rejected(HyperProcessOptions::default().with_param(*name, "x"));
            assert_eq!(what, *name);
            assert!(message.contains("with_tls"), "{message}");
        }
        let opts = HyperProcessOptions::default()
            .with_listen(Listen::Unix)
            .with_tls("c.pem", "k.pem");
        assert!(opts.tls());
        assert_eq!(opts.listen(), Listen::Tcp, "TLS needs TCP");
    }

    #[test]
    fn nul_in_value_is_rejected() {
        rejected(HyperProcessOptions::default().with_param("language", "en\0"));
    }
}

//! Where to connect and how: endpoint, credentials, timeouts, socket tuning.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::protocol::auth::AuthMethods;
use crate::protocol::ssl::SslMode;
use crate::protocol::Limits;

/// A server address: TCP or a Unix domain socket. Both are one code path in
/// the drivers; only the connect step differs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `tab.tcp://host:port`
    Tcp { host: String, port: u16 },
    /// A Unix domain socket file.
    Unix(PathBuf),
}

impl Endpoint {
    /// A TCP endpoint.
    pub fn tcp(host: impl Into<String>, port: u16) -> Endpoint {
        Endpoint::Tcp {
            host: host.into(),
            port,
        }
    }

    /// A Unix domain socket endpoint: the path of the socket file itself.
    pub fn unix(path: impl Into<PathBuf>) -> Endpoint {
        Endpoint::Unix(path.into())
    }

    /// The Unix socket path, if this is a Unix endpoint.
    pub fn unix_path(&self) -> Option<&Path> {
        match self {
            Endpoint::Unix(p) => Some(p),
            Endpoint::Tcp { .. } => None,
        }
    }

    /// Whether the bytes sent here stay on this machine: a Unix socket, or
    /// TCP to `localhost` or a loopback address. Names are not resolved: a
    /// name that resolves to a loopback address counts as remote.
    pub fn is_local(&self) -> bool {
        match self {
            Endpoint::Unix(_) => true,
            Endpoint::Tcp { host, .. } => {
                host.eq_ignore_ascii_case("localhost")
                    || match host.parse::<std::net::IpAddr>() {
                        Ok(std::net::IpAddr::V6(ip)) => {
                            ip.is_loopback()
                                || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
                        }
                        Ok(ip) => ip.is_loopback(),
                        Err(_) => false,
                    }
            }
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => {
                write!(f, "tab.tcp://[{host}]:{port}")
            }
            Endpoint::Tcp { host, port } => write!(f, "tab.tcp://{host}:{port}"),
            Endpoint::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// Parses the descriptors hyperd prints and users type:
///
/// * `tab.tcp://HOST:PORT`, `tcp://HOST:PORT`, `HOST:PORT` (IPv6 as `[::1]:PORT`)
/// * `unix:PATH`, or hyperd's own `tab.domain://DIR/domain/NAME`, which hyperd
///   serves at `DIR/NAME` (measured: not `DIR/domain/NAME`).
impl FromStr for Endpoint {
    type Err = Error;

    fn from_str(s: &str) -> Result<Endpoint> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(Error::config(format!("endpoint `{s}`: empty socket path")));
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        if let Some(rest) = s.strip_prefix("tab.domain://") {
            let (dir, name) = rest.rsplit_once("/domain/").ok_or_else(|| {
                Error::config(format!(
                    "endpoint `{s}`: expected tab.domain://DIR/domain/NAME"
                ))
            })?;
            if name.is_empty() || name.contains('/') {
                return Err(Error::config(format!(
                    "endpoint `{s}`: bad socket name `{name}`"
                )));
            }
            return Ok(Endpoint::Unix(Path::new(dir).join(name)));
        }
        let hostport = s
            .strip_prefix("tab.tcp://")
            .or_else(|| s.strip_prefix("tcp://"))
            .unwrap_or(s);
        // A URL of another scheme (`postgres://`, `http://`) or with a user
        // or path would otherwise split at its last colon into a "host"
        // that only fails to resolve, as if the server were down.
        if let Some((scheme, _)) = hostport.split_once("://") {
            return Err(Error::config(format!(
                "endpoint `{s}`: the scheme `{scheme}://` is not one of this client's (tab.tcp://, \
                 tcp://, unix:, tab.domain://, or HOST:PORT)"
            )));
        }
        if let Some(c) = hostport
            .chars()
            .find(|c| matches!(c, '/' | '@' | '?' | '#') || c.is_whitespace())
        {
            return Err(Error::config(format!(
                "endpoint `{s}`: `{c}` has no place in HOST:PORT (a user, database or options go \
                 in their own settings)"
            )));
        }
        let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
            let (h, p) = rest
                .split_once("]:")
                .ok_or_else(|| Error::config(format!("endpoint `{s}`: expected [HOST]:PORT")))?;
            (h, p)
        } else {
            hostport
                .rsplit_once(':')
                .ok_or_else(|| Error::config(format!("endpoint `{s}`: expected HOST:PORT")))?
        };
        if host.is_empty() {
            return Err(Error::config(format!("endpoint `{s}`: empty host")));
        }
        let port = port
            .parse::<u16>()
            .map_err(|_| Error::config(format!("endpoint `{s}`: bad port `{port}`")))?;
        Ok(Endpoint::tcp(host, port))
    }
}

/// Socket options applied on connect.
///
/// Defaults were measured on Linux against a local hyperd (see DEVELOPMENT.md,
/// "Socket tuning"): large kernel buffers let hyperd keep writing while the
/// client decodes, and a large read window means one syscall moves many rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketOptions {
    /// `TCP_NODELAY`: on, because every request is one batched write.
    pub nodelay: bool,
    /// TCP keepalive: idle time before the first probe; `None` disables
    /// keepalive. With the interval and retries below, a connection whose
    /// peer vanished (host down, cable pulled, NAT entry dropped) fails a
    /// waiting call after about idle + interval x retries (90 s by
    /// default) instead of hanging until the kernel gives up (hours).
    pub keepalive: Option<Duration>,
    /// Time between keepalive probes (`TCP_KEEPINTVL`).
    pub keepalive_interval: Duration,
    /// Unanswered probes before the connection is dropped (`TCP_KEEPCNT`).
    pub keepalive_retries: u32,
    /// `SO_SNDBUF` in bytes; `None` keeps the kernel default.
    pub send_buffer: Option<usize>,
    /// `SO_RCVBUF` in bytes; `None` keeps the kernel default.
    pub recv_buffer: Option<usize>,
    /// How many bytes one read may take from the socket (at least 64 KiB).
    pub read_window: usize,
}

impl Default for SocketOptions {
    fn default() -> Self {
        SocketOptions {
            nodelay: true,
            keepalive: Some(Duration::from_secs(60)),
            keepalive_interval: Duration::from_secs(10),
            keepalive_retries: 3,
            send_buffer: Some(4 << 20),
            recv_buffer: Some(4 << 20),
            read_window: 1 << 20,
        }
    }
}

/// Minimum read window; smaller windows cost a syscall per few rows.
pub const MIN_READ_WINDOW: usize = 64 * 1024;

/// Everything needed to open a connection.
#[derive(Clone)]
pub struct Config {
    pub(crate) endpoint: Endpoint,
    pub(crate) user: String,
    pub(crate) password: Option<String>,
    /// `None`: the default for the endpoint (see [`Config::with_require_auth`]).
    pub(crate) require_auth: Option<AuthMethods>,
    pub(crate) database: Option<String>,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) query_timeout: Option<Duration>,
    pub(crate) socket: SocketOptions,
    pub(crate) limits: Limits,
    pub(crate) statement_cache_capacity: usize,
    /// `None`: the default for the endpoint (see [`Config::with_ssl_mode`]).
    pub(crate) ssl_mode: Option<SslMode>,
    /// PEM bundles given to [`Config::with_root_certificate`].
    pub(crate) root_certificates: Vec<Vec<u8>>,
    pub(crate) tls_server_name: Option<String>,
    /// The rustls config built from the fields above on first use, shared
    /// by clones; every TLS setter starts a new one.
    #[cfg(feature = "tls")]
    pub(crate) tls_cache: crate::client::tls::ConfigCache,
}

impl Config {
    /// The default user hyperd is started with (`--init-user`).
    pub const DEFAULT_USER: &'static str = "tableau_internal_user";

    /// A config for `endpoint` with the default user, no password, a 30 s
    /// connect timeout and no query timeout.
    pub fn new(endpoint: Endpoint) -> Config {
        Config {
            endpoint,
            user: Config::DEFAULT_USER.to_owned(),
            password: None,
            require_auth: None,
            database: None,
            params: Vec::new(),
            connect_timeout: Some(Duration::from_secs(30)),
            query_timeout: None,
            socket: SocketOptions::default(),
            limits: Limits::default(),
            statement_cache_capacity: Config::DEFAULT_STATEMENT_CACHE_CAPACITY,
            ssl_mode: None,
            root_certificates: Vec::new(),
            tls_server_name: None,
            #[cfg(feature = "tls")]
            tls_cache: Default::default(),
        }
    }

    /// How many statements the `*_params` calls keep prepared per
    /// connection, by default.
    pub const DEFAULT_STATEMENT_CACHE_CAPACITY: usize = 128;

    /// How many statements the `*_params` calls keep prepared on the
    /// server (least recently used ones are closed); 0 turns the cache off
    /// and every call parses its SQL again.
    pub fn with_statement_cache_capacity(mut self, capacity: usize) -> Config {
        self.statement_cache_capacity = capacity;
        self
    }

    pub fn statement_cache_capacity(&self) -> usize {
        self.statement_cache_capacity
    }

    pub fn with_user(mut self, user: impl Into<String>) -> Config {
        self.user = user.into();
        self
    }

    pub fn with_password(mut self, password: impl Into<String>) -> Config {
        self.password = Some(password.into());
        self
    }

    /// The authentication methods the server may ask for, like libpq's
    /// `require_auth`; a request for another fails the connect with an
    /// [`ErrorKind::Auth`](crate::error::ErrorKind::Auth) error
    /// ([`Error::refused_auth_method`]) before anything is sent in reply.
    /// `AuthMethods::SCRAM_SHA_256` alone also refuses a server that
    /// skips authentication, which proves nothing about who answered.
    ///
    /// Default: every method for a [local](Endpoint::is_local) endpoint or
    /// under [`SslMode::VerifyFull`], everything but cleartext and MD5 for
    /// any other. Without verified TLS, off the machine anyone on the path,
    /// or anyone who can pose as the server, would get the password in
    /// clear text, or an MD5 hash that gives it up to an offline guess,
    /// just by asking for that method; TLS that does not check the
    /// server's name (`Prefer`, `Require`, `VerifyCa`) encrypts the
    /// password for whoever answered, which may be that attacker. Refusing
    /// costs nothing against hyperd, which asks for SCRAM-SHA-256 whenever
    /// it has a password (measured). Loopback and Unix sockets keep every
    /// method: the bytes never leave the machine, and local servers or
    /// proxies that ask for a password in clear text keep working; pass
    /// `AuthMethods::ALL.without(AuthMethods::CLEARTEXT | AuthMethods::MD5)`
    /// to refuse them there too, or `AuthMethods::ALL` to allow them
    /// everywhere.
    pub fn with_require_auth(mut self, methods: AuthMethods) -> Config {
        self.require_auth = Some(methods);
        self
    }

    /// The authentication methods this config accepts: those given to
    /// [`with_require_auth`](Self::with_require_auth), else the default
    /// for its endpoint.
    pub fn require_auth(&self) -> AuthMethods {
        let safe = self.endpoint.is_local() || self.ssl_mode() == SslMode::VerifyFull;
        self.require_auth.unwrap_or(if safe {
            AuthMethods::ALL
        } else {
            AuthMethods::ALL.without(AuthMethods::CLEARTEXT | AuthMethods::MD5)
        })
    }

    /// Whether and how the connection uses TLS; see [`SslMode`] for what
    /// each mode does.
    ///
    /// Default: [`SslMode::Disable`] for a [local](Endpoint::is_local)
    /// endpoint, where the bytes never leave the machine and TLS would only
    /// cost time; [`SslMode::Prefer`] (libpq's default) for any other.
    /// Only TCP carries TLS: `Require` and the verifying modes fail the
    /// connect on a Unix socket (libpq ignores them there). Without the
    /// crate's `tls` feature `Prefer` connects in plain and the modes that
    /// need TLS fail with a config error.
    pub fn with_ssl_mode(mut self, mode: SslMode) -> Config {
        self.ssl_mode = Some(mode);
        self.reset_tls_cache();
        self
    }

    /// The TLS mode this config connects with: the one given to
    /// [`with_ssl_mode`](Self::with_ssl_mode), else the endpoint's default.
    pub fn ssl_mode(&self) -> SslMode {
        self.ssl_mode.unwrap_or(if self.endpoint.is_local() {
            SslMode::Disable
        } else {
            SslMode::Prefer
        })
    }

    /// Trusts the CA certificates in `pem` (one or more PEM `CERTIFICATE`
    /// blocks) for the server's certificate, instead of the system's root
    /// certificates; may be called several times. As a root file does in
    /// libpq, explicit roots also make [`SslMode::Prefer`] and
    /// [`SslMode::Require`] check the certificate chain. Malformed PEM
    /// fails the connect with [`ErrorKind::Config`](crate::error::ErrorKind::Config).
    pub fn with_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> Config {
        self.root_certificates.push(pem.into());
        self.reset_tls_cache();
        self
    }

    /// The name the server's certificate must carry under
    /// [`SslMode::VerifyFull`], and the one sent as SNI, when it differs
    /// from the endpoint's host (e.g. connecting to `127.0.0.1` a server
    /// whose certificate names `localhost`).
    pub fn with_tls_server_name(mut self, name: impl Into<String>) -> Config {
        self.tls_server_name = Some(name.into());
        self.reset_tls_cache();
        self
    }

    /// The name given to [`with_tls_server_name`](Self::with_tls_server_name).
    pub fn tls_server_name(&self) -> Option<&str> {
        self.tls_server_name.as_deref()
    }

    fn reset_tls_cache(&mut self) {
        #[cfg(feature = "tls")]
        {
            self.tls_cache = Default::default();
        }
    }

    /// The TLS mode to negotiate when connecting, or `None` to connect in
    /// plain without asking; fails when the mode cannot be honoured here.
    pub(crate) fn tls_negotiation(&self) -> Result<Option<SslMode>> {
        let mode = self.ssl_mode();
        if !mode.sends_request() {
            return Ok(None);
        }
        if let Endpoint::Unix(path) = &self.endpoint {
            if mode.requires_tls() {
                return Err(Error::config(format!(
                    "sslmode {mode} needs a TCP endpoint; {} is a Unix socket, which carries \
                     no TLS (its bytes stay on this machine): use sslmode disable or prefer",
                    path.display()
                )));
            }
            return Ok(None);
        }
        if cfg!(feature = "tls") {
            return Ok(Some(mode));
        }
        if mode.requires_tls() {
            return Err(Error::config(format!(
                "sslmode {mode}: this build has no TLS support (enable the `tls` feature)"
            )));
        }
        Ok(None)
    }

    /// A database (a `.hyper` file path) the server attaches at connect time.
    pub fn with_database(mut self, database: impl Into<String>) -> Config {
        self.database = Some(database.into());
        self
    }

    /// A server setting for this session, sent at startup as `-c name=value`
    /// in the `options` parameter, so hyperd rejects an unknown name with a
    /// typed error instead of silently ignoring it.
    ///
    /// Names are checked on connect: ASCII letters, digits, `_` and `.`.
    pub fn with_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Config {
        self.params.push((name.into(), value.into()));
        self
    }

    pub fn with_connect_timeout(mut self, timeout: Option<Duration>) -> Config {
        self.connect_timeout = timeout;
        self
    }

    /// Applies to each query: when it expires the client sends a cancel request
    /// and the query fails with SQLSTATE 57014 (or a timeout error if the server
    /// does not answer at all).
    pub fn with_query_timeout(mut self, timeout: Option<Duration>) -> Config {
        self.query_timeout = timeout;
        self
    }

    pub fn with_socket_options(mut self, socket: SocketOptions) -> Config {
        self.socket = socket;
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> Config {
        self.limits = limits;
        self
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// The value sent for session setting `name`, if any: the last one
    /// given, which is the one hyperd keeps.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    pub fn query_timeout(&self) -> Option<Duration> {
        self.query_timeout
    }

    pub fn socket_options(&self) -> &SocketOptions {
        &self.socket
    }

    /// Checks everything that can be checked before touching the network.
    pub(crate) fn validate(&self) -> Result<()> {
        for (name, value) in &self.params {
            if name.eq_ignore_ascii_case(SIMPLE_QUERY_FORMAT.0) {
                return Err(Error::config(format!(
                    "setting `{name}` is the client's own: it reads every result as HyperBinary"
                )));
            }
            if value
                .chars()
                .any(|c| c.is_whitespace() || c == '\\' || c == '\0')
            {
                return Err(Error::config(format!(
                    "setting `{name}`: hyperd's startup options cannot carry whitespace, \
                     backslashes or NUL in a value; run `SET {name} = '...'` after connecting"
                )));
            }
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            {
                return Err(Error::config(format!(
                    "setting name `{name}`: only ASCII letters, digits, `_` and `.` are allowed"
                )));
            }
        }
        self.tls_negotiation()?;
        if self.socket.read_window < MIN_READ_WINDOW {
            return Err(Error::config(format!(
                "read_window {} is below the minimum {MIN_READ_WINDOW}",
                self.socket.read_window
            )));
        }
        Ok(())
    }
}

/// The session setting that makes hyperd send a simple `Query`'s rows as
/// HyperBinary, as bound statements' rows are asked for. hyperd takes it
/// only at startup (`SET result_format_code` is 0A000, "disabled").
pub(crate) const SIMPLE_QUERY_FORMAT: (&str, &str) = ("result_format_code", "HyperBinary");

impl Config {
    /// The `options` startup parameter carrying the session settings:
    /// `-c name=value` each. `validate` has ruled out values hyperd's option
    /// parser cannot carry (it has no escape for whitespace).
    ///
    /// Every session also gets [`SIMPLE_QUERY_FORMAT`]: the client reads a
    /// simple `Query`'s rows as HyperBinary (`ops::SimpleQueryStart`).
    pub(crate) fn startup_options(&self) -> String {
        let mut out = String::new();
        let own = self.params.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        for (name, value) in own.chain([SIMPLE_QUERY_FORMAT]) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str("-c ");
            out.push_str(name);
            out.push('=');
            out.push_str(value);
        }
        out
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("endpoint", &self.endpoint)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("require_auth", &self.require_auth())
            .field("database", &self.database)
            .field("params", &self.params)
            .field("connect_timeout", &self.connect_timeout)
            .field("query_timeout", &self.query_timeout)
            .field("socket", &self.socket)
            .field("limits", &self.limits)
            .field("statement_cache_capacity", &self.statement_cache_capacity)
            .field("ssl_mode", &self.ssl_mode())
            .field("root_certificates", &self.root_certificates.len())
            .field("tls_server_name", &self.tls_server_name)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::auth::AuthMethod;

    #[test]
    fn parses_tcp_forms() {
        let want = Endpoint::tcp("127.0.0.1", 7483);
        for s in [
            "tab.tcp://127.0.0.1:7483",
            "tcp://127.0.0.1:7483",
            "127.0.0.1:7483",
        ] {
            assert_eq!(s.parse::<Endpoint>().unwrap(), want, "{s}");
        }
        assert_eq!(
            "[::1]:5".parse::<Endpoint>().unwrap(),
            Endpoint::tcp("::1", 5)
        );
        assert_eq!(Endpoint::tcp("::1", 5).to_string(), "tab.tcp://[::1]:5");
    }

    #[test]
    fn domain_descriptor_maps_to_socket_file() {
        let e: Endpoint = "tab.domain:///tmp/x/domain/pgsql".parse().unwrap();
        assert_eq!(e, Endpoint::unix("/tmp/x/pgsql"));
        assert_eq!(
            "unix:/tmp/s".parse::<Endpoint>().unwrap(),
            Endpoint::unix("/tmp/s")
        );
    }

    #[test]
    fn rejects_bad_endpoints() {
        for s in [
            "",
            "nohost",
            "host:notaport",
            ":5",
            "host:70000",
            "unix:",
            "tab.domain:///tmp/x",
            "postgres://localhost:7483",
            "http://localhost:7483",
            "tcp://user@localhost:7483",
            "localhost:7483/db",
            "tab.tcp://localhost:7483?x=1",
            " localhost:7483",
        ] {
            let e = s.parse::<Endpoint>().unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::Config, "{s}");
            assert!(e.to_string().contains("endpoint"), "{s}: {e}");
        }
    }

    #[test]
    fn debug_never_shows_password() {
        let c = Config::new(Endpoint::tcp("h", 1)).with_password("hunter2");
        let d = format!("{c:?}");
        assert!(!d.contains("hunter2"));
        assert!(d.contains("redacted"));
    }

    #[test]
    fn cleartext_and_md5_are_refused_by_default_off_the_machine() {
        let weak = [AuthMethod::Cleartext, AuthMethod::Md5];
        for local in [
            Endpoint::tcp("127.0.0.1", 1),
            Endpoint::tcp("127.8.9.10", 1),
            Endpoint::tcp("::1", 1),
            Endpoint::tcp("::ffff:127.0.0.1", 1),
            Endpoint::tcp("LocalHost", 1),
            Endpoint::unix("/tmp/s"),
        ] {
            assert!(local.is_local(), "{local}");
            let methods = Config::new(local.clone()).require_auth();
            assert_eq!(methods, AuthMethods::ALL, "{local}");
        }
        for remote in [
            Endpoint::tcp("10.0.0.7", 1),
            Endpoint::tcp("fd00::2", 1),
            Endpoint::tcp("db.example.com", 1),
            Endpoint::tcp("localhost.example.com", 1),
        ] {
            assert!(!remote.is_local(), "{remote}");
            let methods = Config::new(remote.clone()).require_auth();
            assert!(weak.iter().all(|m| !methods.contains(*m)), "{remote}");
            assert!(methods.contains(AuthMethod::ScramSha256), "{remote}");
            assert!(methods.contains(AuthMethod::Trust), "{remote}");
            // Asked for, they are allowed.
            let all = Config::new(remote).with_require_auth(AuthMethods::ALL);
            assert_eq!(all.require_auth(), AuthMethods::ALL);
        }
        let strict = Config::new(Endpoint::tcp("127.0.0.1", 1))
            .with_require_auth(AuthMethods::SCRAM_SHA_256);
        assert_eq!(strict.require_auth(), AuthMethods::SCRAM_SHA_256);
        assert!(format!("{strict:?}").contains("require_auth: {ScramSha256}"));
    }

    #[test]
    fn ssl_mode_defaults_to_plain_on_this_machine_and_prefer_off_it() {
        assert_eq!(
            Config::new(Endpoint::tcp("127.0.0.1", 1)).ssl_mode(),
            SslMode::Disable
        );
        assert_eq!(
            Config::new(Endpoint::unix("/s")).ssl_mode(),
            SslMode::Disable
        );
        let remote = Config::new(Endpoint::tcp("db.example.com", 1));
        assert_eq!(remote.ssl_mode(), SslMode::Prefer);
        assert_eq!(
            remote.clone().with_ssl_mode(SslMode::Disable).ssl_mode(),
            SslMode::Disable
        );
        // Only a checked name lets weak methods through off the machine.
        for mode in [SslMode::Prefer, SslMode::Require, SslMode::VerifyCa] {
            let methods = remote.clone().with_ssl_mode(mode).require_auth();
            assert!(!methods.contains(AuthMethod::Cleartext), "{mode}");
        }
        let full = remote.with_ssl_mode(SslMode::VerifyFull);
        assert_eq!(full.require_auth(), AuthMethods::ALL);
        assert!(format!("{full:?}").contains("ssl_mode: VerifyFull"));
    }

    #[test]
    fn unix_sockets_carry_no_tls() {
        let c = Config::new(Endpoint::unix("/tmp/s"));
        assert_eq!(c.tls_negotiation().unwrap(), None);
        let c = c.with_ssl_mode(SslMode::Prefer);
        assert_eq!(c.tls_negotiation().unwrap(), None);
        for mode in [SslMode::Require, SslMode::VerifyCa, SslMode::VerifyFull] {
            let e = c.clone().with_ssl_mode(mode).validate().unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::Config);
            assert!(e.to_string().contains("/tmp/s"), "{e}");
        }
        let tcp = Config::new(Endpoint::tcp("h", 1)).with_ssl_mode(SslMode::Require);
        if cfg!(feature = "tls") {
            assert_eq!(tcp.tls_negotiation().unwrap(), Some(SslMode::Require));
        } else {
            let e = tcp.validate().unwrap_err();
            assert!(e.to_string().contains("`tls` feature"), "{e}");
        }
    }

    #[test]
    fn validate_rejects_bad_param_names() {
        let c = Config::new(Endpoint::tcp("h", 1)).with_param("bad name", "x");
        assert_eq!(
            c.validate().unwrap_err().kind(),
            crate::error::ErrorKind::Config
        );
        let c = Config::new(Endpoint::tcp("h", 1)).with_param("lc_time", "C");
        assert!(c.validate().is_ok());
        // The client's own: rows of a simple Query are read as HyperBinary.
        let c = Config::new(Endpoint::tcp("h", 1)).with_param("Result_Format_Code", "text");
        let err = c.validate().unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Config);
        assert!(err.to_string().contains("Result_Format_Code"), "{err}");
    }

    #[test]
    fn settings_travel_escaped_in_options() {
        let c = Config::new(Endpoint::tcp("h", 1));
        assert_eq!(c.startup_options(), "-c result_format_code=HyperBinary");
        let c = c.with_param("a", "x").with_param("b.c", "y,z");
        assert_eq!(
            c.startup_options(),
            "-c a=x -c b.c=y,z -c result_format_code=HyperBinary"
        );
        assert_eq!(c.param("a"), Some("x"));
        assert_eq!(c.clone().with_param("a", "w").param("a"), Some("w"));
        assert_eq!(c.param("d"), None);
        for bad in ["x y", "a\\b", "t\tab"] {
            let c = Config::new(Endpoint::tcp("h", 1)).with_param("a", bad);
            assert!(
                c.validate().unwrap_err().to_string().contains("SET a"),
                "{bad}"
            );
        }
    }
}

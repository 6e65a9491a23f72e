//! How to open a connection: shared by [`crate::Connection`] and
//! [`crate::AsyncConnection`], which differ only in how they run the plan.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hyperdb_api_core::client::{Config, Endpoint, SocketOptions, SslMode};
use hyperdb_api_core::protocol::auth::AuthMethods;
use hyperdb_api_core::protocol::{Limits, NoticeHandler};

use crate::error::{DbError, Error, Result};
use crate::escape::quote_identifier;

/// What to do with the database file when connecting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CreateMode {
    /// Attach an existing file; error if it is missing.
    #[default]
    DoNotCreate,
    /// Create the file; error if it exists.
    Create,
    /// Create the file unless it exists, then attach it.
    CreateIfNotExists,
    /// Delete the file if it exists, create it anew, attach it. Close (not
    /// just drop) an earlier connection to the same file first: see
    /// [`crate::Connection::close`].
    CreateAndReplace,
}

/// Connection settings; build with `with_*` and pass to
/// `Connection::connect_with` / `AsyncConnection::connect_with`.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    config: Config,
    database: Option<String>,
    create_mode: CreateMode,
    notices: Option<NoticeCallback>,
    slow_statement: Option<Duration>,
}

/// Options that start from a full [`Config`], e.g.
/// [`HyperProcess::config`](crate::HyperProcess::config), which carries
/// the TLS settings of a server started with
/// [`HyperProcessOptions::with_tls`](crate::HyperProcessOptions::with_tls).
impl From<Config> for ConnectOptions {
    fn from(config: Config) -> ConnectOptions {
        ConnectOptions {
            config,
            database: None,
            create_mode: CreateMode::DoNotCreate,
            notices: None,
            slow_statement: None,
        }
    }
}

/// A user callback for server notices, cloneable for `Debug`-able options.
#[derive(Clone)]
pub(crate) struct NoticeCallback(pub(crate) NoticeHandler);

impl std::fmt::Debug for NoticeCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NoticeCallback")
    }
}

impl ConnectOptions {
    /// Options for `endpoint` without a database.
    pub fn new(endpoint: Endpoint) -> ConnectOptions {
        ConnectOptions::from(Config::new(endpoint))
    }

    /// The `.hyper` file to use, and whether to create it. It is attached
    /// under its file stem (`sales` for `data/sales.hyper`), the database
    /// name SQL qualifies its tables with (`"sales"."public"."t"`), as in
    /// Tableau's Hyper API.
    pub fn with_database(mut self, path: impl AsRef<Path>, mode: CreateMode) -> ConnectOptions {
        self.database = Some(path.as_ref().to_string_lossy().into_owned());
        self.create_mode = mode;
        self
    }

    pub fn with_user(mut self, user: impl Into<String>) -> ConnectOptions {
        self.config = self.config.with_user(user);
        self
    }

    pub fn with_password(mut self, password: impl Into<String>) -> ConnectOptions {
        self.config = self.config.with_password(password);
        self
    }

    /// The authentication methods the server may ask for; a request for
    /// another fails the connect before the password is sent
    /// ([`Error::refused_auth_method`]). By default cleartext and MD5 are
    /// refused unless the endpoint is on this machine: see
    /// [`Config::with_require_auth`] for why.
    pub fn with_require_auth(mut self, methods: AuthMethods) -> ConnectOptions {
        self.config = self.config.with_require_auth(methods);
        self
    }

    /// Whether and how to use TLS; by default `Disable` on this machine and
    /// `Prefer` off it. See [`SslMode`] and [`Config::with_ssl_mode`].
    pub fn with_ssl_mode(mut self, mode: SslMode) -> ConnectOptions {
        self.config = self.config.with_ssl_mode(mode);
        self
    }

    /// Trusts the CA certificates in `pem` for the server's certificate,
    /// instead of the system's; see [`Config::with_root_certificate`].
    pub fn with_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> ConnectOptions {
        self.config = self.config.with_root_certificate(pem);
        self
    }

    /// The name the server's certificate must carry under
    /// [`SslMode::VerifyFull`] when it is not the endpoint's host.
    pub fn with_tls_server_name(mut self, name: impl Into<String>) -> ConnectOptions {
        self.config = self.config.with_tls_server_name(name);
        self
    }

    pub fn with_connect_timeout(mut self, timeout: Option<Duration>) -> ConnectOptions {
        self.config = self.config.with_connect_timeout(timeout);
        self
    }

    /// Every query gets this long; then it is cancelled (SQLSTATE 57014).
    pub fn with_query_timeout(mut self, timeout: Option<Duration>) -> ConnectOptions {
        self.config = self.config.with_query_timeout(timeout);
        self
    }

    /// A session setting sent at startup (e.g. `lc_time`); it wins over
    /// the [`SESSION_DEFAULTS`] of the same name.
    pub fn with_param(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> ConnectOptions {
        self.config = self.config.with_param(name, value);
        self
    }

    pub fn with_socket_options(mut self, socket: SocketOptions) -> ConnectOptions {
        self.config = self.config.with_socket_options(socket);
        self
    }

    /// TCP keepalive idle time (default 60 s, then probes every 10 s, 3
    /// unanswered ones drop the connection; see [`SocketOptions`]); `None`
    /// turns keepalive off. A call waiting on a peer that vanished without
    /// closing the connection then fails within about 90 s instead of
    /// hanging for hours.
    pub fn with_keepalive(mut self, idle: Option<Duration>) -> ConnectOptions {
        let socket = SocketOptions {
            keepalive: idle,
            ..self.config.socket_options().clone()
        };
        self.config = self.config.with_socket_options(socket);
        self
    }

    /// How many statements the `*_params` calls (and
    /// [`crate::Connection::query`] with SQL text) keep prepared on the
    /// server, least recently used first out (default
    /// [`Config::DEFAULT_STATEMENT_CACHE_CAPACITY`]); 0 turns the cache off.
    /// A cached statement runs without the `Parse` step, which saves
    /// hyperd planning it again (see DEVELOPMENT.md for the figures). The
    /// cache is emptied after every command that may change what names
    /// mean (DDL, `SET`, `ATTACH`...: every command tag other than reads,
    /// writes and transaction control).
    pub fn with_statement_cache_capacity(mut self, capacity: usize) -> ConnectOptions {
        self.config = self.config.with_statement_cache_capacity(capacity);
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> ConnectOptions {
        self.config = self.config.with_limits(limits);
        self
    }

    /// Receives server notices (default: logged through `tracing`), each
    /// as soon as the connection reads it: before the rest of the reply of
    /// the statement that raised it. Called on the thread (or task) that
    /// drives the connection, so it must not block.
    ///
    /// ```no_run
    /// use hyperdb_api::{ConnectOptions, Connection, HyperProcess};
    /// let hyper = HyperProcess::start()?;
    /// let options = ConnectOptions::new(hyper.endpoint().clone())
    ///     .with_notice_handler(|n| eprintln!("{:?}: {}", n.severity, n.message));
    /// let mut conn = Connection::connect_with(&options)?;
    /// conn.execute_command("ROLLBACK")?; // WARNING: there is no transaction in progress
    /// # Ok::<(), hyperdb_api::Error>(())
    /// ```
    pub fn with_notice_handler(
        mut self,
        f: impl Fn(&DbError) + Send + Sync + 'static,
    ) -> ConnectOptions {
        self.notices = Some(NoticeCallback(Arc::new(f)));
        self
    }

    /// Sends server notices into a channel (instead of a callback, see
    /// [`ConnectOptions::with_notice_handler`]): a `std::sync::mpsc` or
    /// tokio `mpsc` sender of [`DbError`]. The connection never waits for
    /// the receiver; a full bounded channel drops the notice.
    ///
    /// ```no_run
    /// use hyperdb_api::{ConnectOptions, Connection, HyperProcess};
    /// let hyper = HyperProcess::start()?;
    /// let (tx, notices) = std::sync::mpsc::channel();
    /// let options = ConnectOptions::new(hyper.endpoint().clone()).with_notice_channel(tx);
    /// let mut conn = Connection::connect_with(&options)?;
    /// conn.execute_command("ROLLBACK")?;
    /// assert_eq!(notices.try_recv().unwrap().code.unwrap().code(), "25P01");
    /// # Ok::<(), hyperdb_api::Error>(())
    /// ```
    pub fn with_notice_channel(mut self, sender: impl crate::NoticeSender) -> ConnectOptions {
        self.notices = Some(NoticeCallback(crate::notices::channel_handler(sender)));
        self
    }

    /// Logs a WARN event (target `hyperdb_api::trace`, message "slow
    /// statement", with the SQL cut to 1,024 bytes, `duration_ms` and
    /// `threshold_ms`) for each statement that takes longer than
    /// `threshold`; `None` (the default) logs none. A streamed result's
    /// statement lasts until the stream ends or is dropped, so the time the
    /// caller spends between rows counts too. Off by default because long
    /// statements are normal work for an analytical engine: set it to what
    /// is slow for your application. See the README's "Tracing" section
    /// for the statement spans.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hyperdb_api::{ConnectOptions, Endpoint};
    /// let options = ConnectOptions::new(Endpoint::tcp("localhost", 7483))
    ///     .with_slow_statement_threshold(Some(Duration::from_millis(500)));
    /// assert_eq!(options.slow_statement_threshold(), Some(Duration::from_millis(500)));
    /// ```
    pub fn with_slow_statement_threshold(mut self, threshold: Option<Duration>) -> ConnectOptions {
        self.slow_statement = threshold;
        self
    }

    /// The slow-statement threshold ([`with_slow_statement_threshold`](Self::with_slow_statement_threshold)).
    pub fn slow_statement_threshold(&self) -> Option<Duration> {
        self.slow_statement
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The database file, if one is set.
    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// What is done with the database file when connecting.
    pub fn create_mode(&self) -> CreateMode {
        self.create_mode
    }

    /// The wire config and the statements to run right after startup.
    pub(crate) fn plan(&self) -> Result<ConnectPlan> {
        let config = with_session_defaults(self.config.clone());
        let Some(db) = &self.database else {
            return Ok(ConnectPlan {
                config,
                setup: Vec::new(),
                alias: None,
                notices: self.notices.clone().map(|n| n.0),
            });
        };
        if db.is_empty() {
            return Err(Error::invalid_argument("database", "the path is empty"));
        }
        // Every mode attaches the file under its stem, as Tableau's Hyper
        // API does, so SQL that names the database (`"sales"."public"."t"`)
        // runs through either client. A missing file fails the attach, and
        // with it the connect (58S01).
        let path = quote_identifier(db)?;
        let alias = database_alias(Path::new(db)).ok_or_else(|| {
            Error::invalid_argument("database", format!("`{db}` has no file name"))
        })?;
        let mut config = config;
        let mut setup = Vec::new();
        match self.create_mode {
            CreateMode::Create => setup.push(vec![format!("CREATE DATABASE {path}")]),
            CreateMode::CreateIfNotExists => {
                setup.push(vec![format!("CREATE DATABASE IF NOT EXISTS {path}")])
            }
            CreateMode::CreateAndReplace => {
                // hyperd 0.0.26963 crashes (SIGSEGV) when a DROP DATABASE
                // lands while the session that last used the file is still
                // closing it, as after "drop a connection, reconnect with
                // CreateAndReplace". An ATTACH waits for a close already under
                // way, and our DETACH closes the file again before our DROP.
                // Measured: without this, the crash came within ~100
                // close-then-replace rounds; with it, none in 4,000. A session
                // that still holds the file while we attach can still release
                // it during our DROP: `close` detaches first for that.
                setup.push(vec![format!("CREATE DATABASE IF NOT EXISTS {path}")]);
                setup.push(vec![
                    attach_sql(Path::new(db), &alias)?,
                    detach_sql(&alias)?,
                    format!("DROP DATABASE {path}"),
                ]);
                setup.push(vec![format!("CREATE DATABASE {path}")]);
            }
            CreateMode::DoNotCreate => {
                // An existing file is attached at startup, as Tableau's
                // Hyper API attaches it: hyperd's `database` startup
                // parameter takes a JSON list of `{alias, path}`. One round
                // trip less than an ATTACH after it (measured: a Node
                // connect to an existing file 1.13-1.20 ms before, 0.99-1.04
                // after, Tableau's 0.86-0.91).
                config = config.with_database(startup_database(db, &alias));
            }
        }
        // A created file is attached once it exists.
        if !setup.is_empty() {
            setup.push(vec![attach_sql(Path::new(db), &alias)?]);
        }
        Ok(ConnectPlan {
            config,
            setup,
            alias: Some(alias),
            notices: self.notices.clone().map(|n| n.0),
        })
    }
}

/// The session settings every connection starts with, unless the caller
/// sets them: the values Tableau's own Hyper API connects with, so that the
/// same SQL gives the same values through either client.
/// - `extra_float_digits = 2`: a REAL or DOUBLE PRECISION cast to text
///   (`::text`, `COPY ... TO` CSV) carries every digit it needs to read
///   back exactly (`0.30000000000000004`); hyperd's default, 0, rounds to
///   15 significant digits (`0.3`), losing data on export.
/// - `two_digit_year_threshold = 40`: a two-digit year in text parsed as a
///   date reads `00`-`39` as 2000-2039 and `40`-`99` as 1940-1999; hyperd's
///   default (70) would read `01/02/50` as 2050 where Tableau reads 1950.
pub const SESSION_DEFAULTS: [(&str, &str); 2] = [
    ("extra_float_digits", "2"),
    ("two_digit_year_threshold", "40"),
];

/// `config` with every [`SESSION_DEFAULTS`] setting it does not set itself.
fn with_session_defaults(mut config: Config) -> Config {
    for (name, value) in SESSION_DEFAULTS {
        if config.param(name).is_none() {
            config = config.with_param(name, value);
        }
    }
    config
}

/// How long connect waits for a database file that another, just-ended
/// session still holds: hyperd releases files shortly after a session ends,
/// so "drop a connection, reopen the file" would otherwise fail at random
/// with SQLSTATE 55006.
pub(crate) const IN_USE_PATIENCE: Duration = Duration::from_secs(5);
pub(crate) const IN_USE_POLL: Duration = Duration::from_millis(20);

/// Whether a setup statement, or a connect that attaches its file at
/// startup, should be retried (see [`IN_USE_PATIENCE`]).
pub(crate) fn should_retry(e: &hyperdb_api_core::Error, started: std::time::Instant) -> bool {
    e.code() == Some(&hyperdb_api_core::error::SqlState::OBJECT_IN_USE)
        && started.elapsed() < IN_USE_PATIENCE
}

/// Runs a plan's setup groups, `$sql => $run` running one statement (a
/// `Result`; it may `.await`), and `$pause` waiting before a group that
/// found its file in use is run again from its start (see
/// [`IN_USE_PATIENCE`]). Shared by the sync and async connect.
macro_rules! run_setup {
    ($plan:expr, $sql:ident => $run:expr, pause: $pause:expr) => {
        for group in &$plan.setup {
            let started = std::time::Instant::now();
            'group: loop {
                for $sql in group {
                    match $run {
                        Err(e) if $crate::options::should_retry(&e, started) => {
                            $pause;
                            continue 'group;
                        }
                        res => res?,
                    };
                }
                break;
            }
        }
    };
}
pub(crate) use run_setup;

/// Connects a plan's client, `$connect` making one attempt (a `Result`;
/// it may `.await`), and `$pause` waiting before another when the file
/// attached at startup is still held by a session that just ended (see
/// [`IN_USE_PATIENCE`]). Shared by the sync and async connect.
macro_rules! connect_client {
    ($connect:expr, pause: $pause:expr) => {{
        let started = std::time::Instant::now();
        loop {
            match $connect {
                Err(e) if $crate::options::should_retry(&e, started) => $pause,
                res => break res,
            }
        }
    }};
}
pub(crate) use connect_client;

/// The result of [`ConnectOptions::plan`].
pub(crate) struct ConnectPlan {
    pub(crate) config: Config,
    /// Statements to run after startup, in groups: a group that fails
    /// because the file is in use is run again from its start.
    pub(crate) setup: Vec<Vec<String>>,
    /// The alias the database file is attached under, if one is.
    pub(crate) alias: Option<String>,
    pub(crate) notices: Option<NoticeHandler>,
}

/// The name a database file is attached under when the caller gives
/// none: its file stem (`sales` for `/data/sales.hyper`), as Tableau's
/// Hyper API names it; `None` for a path without a file name.
pub(crate) fn database_alias(path: &Path) -> Option<String> {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}

/// hyperd's `database` startup parameter attaching `path` as `alias`:
/// `[{"alias": "...", "path": "..."}]`.
fn startup_database(path: &str, alias: &str) -> String {
    let mut json = String::from("[{\"alias\": ");
    push_json_string(&mut json, alias);
    json.push_str(", \"path\": ");
    push_json_string(&mut json, path);
    json.push_str("}]");
    json
}

/// `s` as a JSON string literal.
fn push_json_string(out: &mut String, s: &str) {
    use std::fmt::Write;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                // Writing into a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `ATTACH DATABASE "path" AS "alias"`.
pub(crate) fn attach_sql(path: &Path, alias: &str) -> Result<String> {
    Ok(format!(
        "ATTACH DATABASE {} AS {}",
        // Not lossy: a replaced byte would name (and attach) another file.
        quote_identifier(crate::escape::utf8_path(path)?)?,
        quote_identifier(alias)?
    ))
}

/// `DETACH DATABASE "alias"`.
pub(crate) fn detach_sql(alias: &str) -> Result<String> {
    Ok(format!("DETACH DATABASE {}", quote_identifier(alias)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ConnectOptions {
        ConnectOptions::new(Endpoint::tcp("127.0.0.1", 1))
    }

    /// A path that is not UTF-8 is refused, as `create_database` refuses
    /// it: made lossy, it attached whichever file the replaced byte named.
    #[test]
    #[cfg(unix)]
    fn a_path_that_is_not_utf8_is_refused_not_attached_lossily() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/d/victim\xff.hyper"));
        let e = attach_sql(path, "bad").unwrap_err();
        assert!(e.to_string().contains("not valid UTF-8"), "{e}");
        assert!(attach_sql(Path::new("/d/ok.hyper"), "ok").is_ok());
    }

    #[test]
    fn do_not_create_attaches_under_the_stem_at_startup() {
        let p = opts()
            .with_database("/d/my.db.hyper", CreateMode::DoNotCreate)
            .plan()
            .unwrap();
        assert_eq!(
            p.config.database(),
            Some("[{\"alias\": \"my.db\", \"path\": \"/d/my.db.hyper\"}]")
        );
        assert!(p.setup.is_empty());
        assert_eq!(p.alias.as_deref(), Some("my.db"));
        let p = opts()
            .with_database("/d/a \"b\"\\c\u{1}ü.hyper", CreateMode::DoNotCreate)
            .plan()
            .unwrap();
        assert_eq!(
            p.config.database(),
            Some(
                "[{\"alias\": \"a \\\"b\\\"\\\\c\\u0001ü\", \
                 \"path\": \"/d/a \\\"b\\\"\\\\c\\u0001ü.hyper\"}]"
            )
        );
        let Err(e) = opts().with_database("/", CreateMode::DoNotCreate).plan() else {
            panic!("a path without a file name is refused");
        };
        assert!(e.to_string().contains("no file name"), "{e}");
    }

    #[test]
    fn create_modes_run_ddl_then_attach() {
        let p = opts()
            .with_database("/d/my \"db\".hyper", CreateMode::CreateAndReplace)
            .plan()
            .unwrap();
        assert_eq!(p.config.database(), None);
        let file = "\"/d/my \"\"db\"\".hyper\"";
        let attach = format!("ATTACH DATABASE {file} AS \"my \"\"db\"\"\"");
        assert_eq!(
            p.setup,
            vec![
                vec![format!("CREATE DATABASE IF NOT EXISTS {file}")],
                vec![
                    attach.clone(),
                    "DETACH DATABASE \"my \"\"db\"\"\"".to_string(),
                    format!("DROP DATABASE {file}"),
                ],
                vec![format!("CREATE DATABASE {file}")],
                vec![attach],
            ]
        );
        let p = opts()
            .with_database("/d/x.hyper", CreateMode::CreateIfNotExists)
            .plan()
            .unwrap();
        assert_eq!(
            p.setup,
            vec![
                vec!["CREATE DATABASE IF NOT EXISTS \"/d/x.hyper\"".to_string()],
                vec!["ATTACH DATABASE \"/d/x.hyper\" AS \"x\"".to_string()],
            ]
        );
    }

    #[test]
    fn session_defaults_yield_to_the_callers_settings() {
        let p = opts().plan().unwrap();
        assert_eq!(p.config.param("extra_float_digits"), Some("2"));
        assert_eq!(p.config.param("two_digit_year_threshold"), Some("40"));
        let p = opts()
            .with_param("two_digit_year_threshold", "70")
            .with_database("/d/x.hyper", CreateMode::DoNotCreate)
            .plan()
            .unwrap();
        assert_eq!(p.config.param("two_digit_year_threshold"), Some("70"));
        assert_eq!(p.config.param("extra_float_digits"), Some("2"));
        // A config built elsewhere (HyperProcess::config) gets them too.
        let p = ConnectOptions::from(
            Config::new(Endpoint::tcp("h", 1)).with_param("extra_float_digits", "0"),
        )
        .with_database("/d/x.hyper", CreateMode::Create)
        .plan()
        .unwrap();
        assert_eq!(p.config.param("extra_float_digits"), Some("0"));
        assert_eq!(p.config.param("two_digit_year_threshold"), Some("40"));
    }

    #[test]
    fn bad_paths_are_rejected_before_connecting() {
        assert!(opts().with_database("", CreateMode::Create).plan().is_err());
        assert!(opts()
            .with_database("/d/a\0b.hyper", CreateMode::Create)
            .plan()
            .is_err());
    }
}

//! Connection strings (`hyper://...`) parsed into [`ConnectOptions`].

use std::str::FromStr;
use std::time::Duration;

use hyperdb_api_core::client::Endpoint;
use hyperdb_api_core::protocol::auth::{AuthMethod, AuthMethods};

use crate::error::{Error, Result};
use crate::options::{ConnectOptions, CreateMode};

/// Parses a connection string:
///
/// ```text
/// hyper://[user[:password]@]host:port[/absolute/path/to/db.hyper][?key=value&...]
/// hyper://[user[:password]@]/path/to/db.hyper?host=/path/to/socket    (Unix socket)
/// ```
///
/// Every part is percent-decoded (`%2F` is `/`, `+` stays `+`). The URL
/// path is the database file's absolute path; a relative one goes in
/// `database=`. A Unix socket is named like libpq does, by a `host` that
/// is a path: `?host=/dir/socket`, or percent-encoded in place of the host
/// (`hyper://%2Fdir%2Fsocket/db.hyper`); hyperd's socket is a file, so
/// there is no port then.
///
/// | key | value |
/// |---|---|
/// | `create_mode` | `do_not_create` (default), `create`, `create_if_not_exists`, `create_and_replace` |
/// | `connect_timeout`, `query_timeout` | seconds (`30`, `2.5`) or with a unit (`500ms`, `30s`, `5m`); `none` or `0` for no timeout |
/// | `keepalive` | TCP keepalive idle time as above; `off` turns it off |
/// | `statement_cache_capacity` | statements kept prepared; `0` turns the cache off |
/// | `require_auth` | libpq's names, comma-separated: `scram-sha-256`, `md5`, `password`, `none` |
/// | `user`, `password`, `host`, `database` | instead of (or over) the URL's parts |
/// | `set.NAME` | a session setting sent at startup ([`ConnectOptions::with_param`]) |
///
/// Errors name the part and the value found in it, never the password.
///
/// ```
/// use hyperdb_api::{ConnectOptions, CreateMode};
/// let opts: ConnectOptions =
///     "hyper://me:s%40cret@127.0.0.1:7483/data/sales.hyper?create_mode=create_if_not_exists&query_timeout=30s"
///         .parse()?;
/// assert_eq!(opts.database(), Some("/data/sales.hyper"));
/// assert_eq!(opts.create_mode(), CreateMode::CreateIfNotExists);
/// assert_eq!(opts.config().user(), "me");
/// assert!(!format!("{opts:?}").contains("s@cret"));
/// # Ok::<(), hyperdb_api::Error>(())
/// ```
impl FromStr for ConnectOptions {
    type Err = Error;

    fn from_str(s: &str) -> Result<ConnectOptions> {
        parse(s)
    }
}

fn bad(part: &str, message: impl Into<String>) -> Error {
    Error::invalid_argument(format!("connection string: {part}"), message)
}

fn parse(s: &str) -> Result<ConnectOptions> {
    let rest = s
        .strip_prefix("hyper://")
        .ok_or_else(|| match s.split_once("://") {
            Some((scheme, _)) => bad("scheme", format!("`{scheme}://`; expected `hyper://`")),
            None => bad("scheme", "missing; the string must start with `hyper://`"),
        })?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    // The password may hold `@` only percent-encoded; the last `@` ends it.
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (mut user, mut password) = (None, None);
    if let Some(userinfo) = userinfo {
        let (u, p) = match userinfo.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (userinfo, None),
        };
        user = Some(decode("user", u)?);
        // Decoded without echoing it: an error says only that it is bad.
        password = p
            .map(|p| decode("password", p).map_err(|_| bad("password", "invalid percent-encoding")))
            .transpose()?;
    }
    let mut host = (!hostport.is_empty()).then(|| hostport.to_owned());
    let mut database = (!path.is_empty())
        .then(|| decode("path", path))
        .transpose()?;
    let mut create_mode = CreateMode::DoNotCreate;
    let mut settings: Vec<Box<dyn FnOnce(ConnectOptions) -> ConnectOptions>> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, raw) = pair
            .split_once('=')
            .ok_or_else(|| bad("query", format!("`{pair}` has no `=`; expected key=value")))?;
        let key = decode("query key", key)?;
        let value = decode(&key, raw);
        let value = if key == "password" {
            value.map_err(|_| bad("password", "invalid percent-encoding"))?
        } else {
            value?
        };
        match key.as_str() {
            "create_mode" => create_mode = parse_create_mode(&value)?,
            "connect_timeout" => {
                let t = parse_duration(&key, &value)?;
                settings.push(Box::new(move |o| o.with_connect_timeout(t)));
            }
            "query_timeout" => {
                let t = parse_duration(&key, &value)?;
                settings.push(Box::new(move |o| o.with_query_timeout(t)));
            }
            "keepalive" => {
                let t = if value == "off" {
                    None
                } else {
                    parse_duration(&key, &value)?
                };
                settings.push(Box::new(move |o| o.with_keepalive(t)));
            }
            "statement_cache_capacity" => {
                let n = value.parse::<usize>().map_err(|_| {
                    bad(
                        &key,
                        format!("`{value}` is not a count (0 turns the cache off)"),
                    )
                })?;
                settings.push(Box::new(move |o| o.with_statement_cache_capacity(n)));
            }
            "require_auth" => {
                let methods = parse_auth(&value)?;
                settings.push(Box::new(move |o| o.with_require_auth(methods)));
            }
            "user" => user = Some(value),
            "password" => password = Some(value),
            "host" => host = Some(value),
            "database" => database = Some(value),
            other => match other.strip_prefix("set.") {
                Some(name) if !name.is_empty() => {
                    let name = name.to_owned();
                    settings.push(Box::new(move |o| o.with_param(name, value)));
                }
                _ => {
                    return Err(bad(
                        "query",
                        format!(
                            "unknown key `{other}`; known: create_mode, connect_timeout, \
                             query_timeout, keepalive, statement_cache_capacity, require_auth, \
                             user, password, host, database, set.NAME"
                        ),
                    ))
                }
            },
        }
    }
    let host =
        host.ok_or_else(|| bad("host", "missing: give host:port, or ?host=/path/to/socket"))?;
    let mut opts = ConnectOptions::new(parse_endpoint(&host)?);
    if let Some(db) = database {
        opts = opts.with_database(db, create_mode);
    } else if create_mode != CreateMode::DoNotCreate {
        return Err(bad("create_mode", "given without a database path"));
    }
    if let Some(user) = user {
        if user.is_empty() {
            return Err(bad("user", "empty"));
        }
        opts = opts.with_user(user);
    }
    if let Some(password) = password {
        opts = opts.with_password(password);
    }
    for setting in settings {
        opts = setting(opts);
    }
    Ok(opts)
}

/// `host:port` (IPv6 as `[::1]:port`), or a socket path (percent-decoded
/// `/dir/socket`).
fn parse_endpoint(hostport: &str) -> Result<Endpoint> {
    let decoded = decode("host", hostport)?;
    if decoded.starts_with('/') {
        return Ok(Endpoint::unix(decoded));
    }
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        rest.split_once("]:")
            .ok_or_else(|| bad("host", format!("`{hostport}`: expected [IPv6]:port")))?
    } else {
        hostport.rsplit_once(':').ok_or_else(|| {
            bad(
                "port",
                format!("missing in `{hostport}`: hyperd has no default port, give host:port"),
            )
        })?
    };
    if host.is_empty() {
        return Err(bad("host", format!("empty in `{hostport}`")));
    }
    let port = port
        .parse::<u16>()
        .map_err(|_| bad("port", format!("`{port}` is not a port number (0-65535)")))?;
    Ok(Endpoint::tcp(decode("host", host)?, port))
}

fn parse_create_mode(value: &str) -> Result<CreateMode> {
    Ok(match value {
        "do_not_create" => CreateMode::DoNotCreate,
        "create" => CreateMode::Create,
        "create_if_not_exists" => CreateMode::CreateIfNotExists,
        "create_and_replace" => CreateMode::CreateAndReplace,
        other => {
            return Err(bad(
                "create_mode",
                format!(
                    "`{other}`; expected do_not_create, create, create_if_not_exists or \
                     create_and_replace"
                ),
            ))
        }
    })
}

/// `none`/`0`: no timeout; a number of seconds, or a number with `ms`,
/// `s` or `m`.
fn parse_duration(key: &str, value: &str) -> Result<Option<Duration>> {
    if value == "none" {
        return Ok(None);
    }
    let (number, unit) = if let Some(n) = value.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = value.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = value.strip_suffix('m') {
        (n, 60.0)
    } else {
        (value, 1.0)
    };
    let secs = number
        .parse::<f64>()
        .ok()
        .map(|n| n * unit)
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e9)
        .ok_or_else(|| {
            bad(
                key,
                format!("`{value}` is not a duration (e.g. 30, 2.5s, 500ms, 5m, none)"),
            )
        })?;
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

fn parse_auth(value: &str) -> Result<AuthMethods> {
    let mut methods = AuthMethods::NONE;
    for name in value.split(',') {
        let method = AuthMethod::from_libpq_name(name.trim()).ok_or_else(|| {
            bad(
                "require_auth",
                format!("unknown method `{name}`; expected scram-sha-256, md5, password or none"),
            )
        })?;
        methods = methods | AuthMethods::from(method);
    }
    Ok(methods)
}

/// Percent-decodes `s` (`part` names it in errors); the result must be
/// UTF-8.
fn decode(part: &str, s: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            let byte = hex
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    let shown: String = s[i..].chars().take(3).collect();
                    bad(part, format!("bad percent-escape `{shown}` in `{s}`"))
                })?;
            out.push(byte);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad(part, format!("`{s}` does not decode to UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyperdb_api_core::client::Config;

    fn parsed(s: &str) -> ConnectOptions {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn error(s: &str) -> String {
        let e = s.parse::<ConnectOptions>().expect_err(s);
        assert!(matches!(e, Error::InvalidArgument { .. }), "{s}: {e:?}");
        e.to_string()
    }

    #[test]
    fn full_tcp_form() {
        let o = parsed(
            "hyper://me:p%40ss%3Aw@db.local:7483/var/data/my%20db.hyper?create_mode=create_and_replace\
             &connect_timeout=2.5&query_timeout=500ms&keepalive=5m&statement_cache_capacity=0\
             &require_auth=scram-sha-256,none&set.lc_time=C",
        );
        let c = o.config();
        assert_eq!(c.endpoint(), &Endpoint::tcp("db.local", 7483));
        assert_eq!(c.user(), "me");
        assert_eq!(o.database(), Some("/var/data/my db.hyper"));
        assert_eq!(o.create_mode(), CreateMode::CreateAndReplace);
        assert_eq!(c.connect_timeout(), Some(Duration::from_millis(2500)));
        assert_eq!(c.query_timeout(), Some(Duration::from_millis(500)));
        assert_eq!(c.socket_options().keepalive, Some(Duration::from_secs(300)));
        assert_eq!(c.statement_cache_capacity(), 0);
        assert_eq!(
            c.require_auth(),
            AuthMethods::SCRAM_SHA_256 | AuthMethods::TRUST
        );
        let shown = format!("{o:?}");
        assert!(
            !shown.contains("p@ss:w") && shown.contains("redacted"),
            "{shown}"
        );
        assert!(shown.contains("lc_time"), "{shown}");
    }

    #[test]
    fn minimal_forms_and_defaults() {
        let o = parsed("hyper://127.0.0.1:1");
        assert_eq!(o.config().endpoint(), &Endpoint::tcp("127.0.0.1", 1));
        assert_eq!(o.config().user(), Config::DEFAULT_USER);
        assert_eq!(o.database(), None);
        assert_eq!(
            o.config().statement_cache_capacity(),
            Config::DEFAULT_STATEMENT_CACHE_CAPACITY
        );
        let o = parsed("hyper://[::1]:9/x.hyper?connect_timeout=none&keepalive=off");
        assert_eq!(o.config().endpoint(), &Endpoint::tcp("::1", 9));
        assert_eq!(o.config().connect_timeout(), None);
        assert_eq!(o.config().socket_options().keepalive, None);
        assert_eq!(o.create_mode(), CreateMode::DoNotCreate);
        let o = parsed("hyper://h:1?database=rel/x.hyper&user=u%2Bv");
        assert_eq!(o.database(), Some("rel/x.hyper"));
        assert_eq!(o.config().user(), "u+v");
    }

    #[test]
    fn unix_socket_forms() {
        let o = parsed("hyper:///db/x.hyper?host=/tmp/hyper/sock");
        assert_eq!(o.config().endpoint(), &Endpoint::unix("/tmp/hyper/sock"));
        assert_eq!(o.database(), Some("/db/x.hyper"));
        let o = parsed("hyper://%2Ftmp%2Fsock/db/x.hyper");
        assert_eq!(o.config().endpoint(), &Endpoint::unix("/tmp/sock"));
        assert_eq!(o.database(), Some("/db/x.hyper"));
    }

    #[test]
    fn every_error_names_its_part_and_value() {
        for (s, part, shows) in [
            ("postgres://h:1", "scheme", "postgres"),
            ("h:1", "scheme", ""),
            ("hyper://", "host", "missing"),
            ("hyper:///x.hyper", "host", "missing"),
            ("hyper://h/x.hyper", "port", "`h`"),
            ("hyper://h:99999", "port", "99999"),
            ("hyper://h:x1", "port", "x1"),
            ("hyper://:5", "host", "empty"),
            ("hyper://[::1/x", "host", "[::1"),
            (
                "hyper://h:1?create_mode=sometimes&database=/x",
                "create_mode",
                "sometimes",
            ),
            (
                "hyper://h:1?create_mode=create",
                "create_mode",
                "without a database",
            ),
            ("hyper://h:1?query_timeout=soon", "query_timeout", "soon"),
            ("hyper://h:1?connect_timeout=-1", "connect_timeout", "-1"),
            ("hyper://h:1?keepalive=1h", "keepalive", "1h"),
            (
                "hyper://h:1?statement_cache_capacity=-3",
                "statement_cache_capacity",
                "-3",
            ),
            (
                "hyper://h:1?require_auth=kerberos",
                "require_auth",
                "kerberos",
            ),
            ("hyper://h:1?colour=blue", "query", "colour"),
            ("hyper://h:1?set.=x", "query", "set."),
            ("hyper://h:1?justakey", "query", "justakey"),
            ("hyper://h:1/x%zz.hyper", "path", "%zz"),
            ("hyper://h:1/x%ff.hyper", "path", "UTF-8"),
            ("hyper://u%g@h:1", "user", "%g"),
            ("hyper://@h:1", "user", "empty"),
        ] {
            let e = error(s);
            assert!(
                e.contains(&format!("connection string: {part}")),
                "{s}: {e}"
            );
            assert!(e.contains(shows), "{s}: {e}");
        }
    }

    #[test]
    fn a_bad_password_is_never_shown() {
        for s in [
            "hyper://u:sec%zzret@h:1",
            "hyper://h:1?password=sec%zzret",
            "hyper://u:secret@h:notaport",
        ] {
            let e = error(s);
            assert!(!e.contains("sec"), "{s}: {e}");
        }
    }
}

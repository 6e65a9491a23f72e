//! Where the gRPC server is and how to reach it: URI, TLS, limits.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Result};

/// Largest single response message accepted by default. hyperd aims at
/// 4 MiB messages (`grpc_result_target_message_size`); one wide row can
/// exceed that, so the limit is well above.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;

/// How to connect to a `HyperService`.
///
/// Endpoints are URIs: `http://HOST:PORT` (plain HTTP/2), `https://HOST:PORT`
/// (TLS with rustls; certificates are verified against the system's roots
/// plus any [`GrpcConfig::with_ca_certificate`]), or hyperd's own listen
/// descriptor `tcp.grpc://HOST:PORT` (plain).
#[derive(Clone)]
pub struct GrpcConfig {
    pub(crate) uri: String,
    pub(crate) tls: bool,
    pub(crate) ca_certificates: Vec<Vec<u8>>,
    pub(crate) system_roots: bool,
    pub(crate) domain: Option<String>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) query_timeout: Option<Duration>,
    pub(crate) max_message_size: usize,
    pub(crate) headers: Vec<(String, String)>,
}

impl GrpcConfig {
    /// A config for `endpoint` (see the type docs for the accepted forms).
    pub fn new(endpoint: &str) -> Result<GrpcConfig> {
        let (uri, tls) = if let Some(rest) = endpoint.strip_prefix("tcp.grpc://") {
            (format!("http://{rest}"), false)
        } else if endpoint.starts_with("http://") {
            (endpoint.to_owned(), false)
        } else if endpoint.starts_with("https://") {
            (endpoint.to_owned(), true)
        } else {
            return Err(Error::config(format!(
                "gRPC endpoint `{endpoint}`: expected http://HOST:PORT, https://HOST:PORT \
                 or tcp.grpc://HOST:PORT"
            )));
        };
        let authority = uri.split_once("://").map_or("", |(_, rest)| rest);
        let authority = authority.split('/').next().unwrap_or("");
        if authority.is_empty() {
            return Err(Error::config(format!(
                "gRPC endpoint `{endpoint}`: no host"
            )));
        }
        Ok(GrpcConfig {
            uri,
            tls,
            ca_certificates: Vec::new(),
            system_roots: true,
            domain: None,
            connect_timeout: Some(Duration::from_secs(30)),
            query_timeout: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            headers: Vec::new(),
        })
    }

    /// The URI connected to (`tcp.grpc://` rewritten to `http://`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Whether the connection uses TLS (an `https` endpoint).
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// Also trusts this CA certificate (PEM) for `https` endpoints; may be
    /// called several times.
    pub fn with_ca_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca_certificates.push(pem.into());
        self
    }

    /// Whether the system's root certificates are trusted (default true).
    /// Off, only [`GrpcConfig::with_ca_certificate`] certificates are.
    pub fn with_system_roots(mut self, on: bool) -> Self {
        self.system_roots = on;
        self
    }

    /// The name the server certificate must carry, when it differs from the
    /// endpoint's host.
    pub fn with_domain_name(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// How long connecting (TCP and TLS) may take; `None` waits as long as
    /// the OS does. 30 s by default.
    pub fn with_connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one query may take, from the call that starts it to the
    /// end of its result; `None` (the default) waits as long as it takes.
    /// On expiry the call fails with a timeout error
    /// ([`Error::is_timeout`]) and the query is cancelled on the server in
    /// the background. A query whose replies stopped arriving (a dead
    /// link) fails this way too; without a timeout it would wait forever.
    pub fn with_query_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.query_timeout = timeout;
        self
    }

    /// The largest response message accepted
    /// ([`DEFAULT_MAX_MESSAGE_SIZE`] by default).
    pub fn with_max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// A metadata header sent with every call (e.g. authorization for a
    /// server behind a proxy). Names are lowercase ASCII.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

impl FromStr for GrpcConfig {
    type Err = Error;

    fn from_str(s: &str) -> Result<GrpcConfig> {
        GrpcConfig::new(s)
    }
}

impl fmt::Debug for GrpcConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrpcConfig")
            .field("uri", &self.uri)
            .field("tls", &self.tls)
            .field("ca_certificates", &self.ca_certificates.len())
            .field("system_roots", &self.system_roots)
            .field("domain", &self.domain)
            .field("connect_timeout", &self.connect_timeout)
            .field("query_timeout", &self.query_timeout)
            .field("max_message_size", &self.max_message_size)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse() {
        let c: GrpcConfig = "tcp.grpc://127.0.0.1:7484".parse().expect("parse");
        assert_eq!(c.uri(), "http://127.0.0.1:7484");
        assert!(!c.is_tls());
        let c = GrpcConfig::new("https://db.example:443").expect("parse");
        assert!(c.is_tls());
        assert!(GrpcConfig::new("127.0.0.1:7484").is_err());
        assert!(GrpcConfig::new("http://").is_err());
    }

    #[test]
    fn debug_hides_header_values() {
        let c = GrpcConfig::new("http://h:1")
            .expect("parse")
            .with_header("authorization", "Bearer secret");
        assert!(!format!("{c:?}").contains("secret"));
    }
}

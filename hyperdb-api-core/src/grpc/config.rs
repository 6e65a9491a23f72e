//! Where the gRPC server is and how to reach it: URI, TLS, limits.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Result};

/// Largest single response message accepted by default. hyperd aims at
/// 4 MiB messages (`grpc_result_target_message_size`); one wide row can
/// exceed that, so the limit is well above.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;

/// HTTP/2 per-stream receive window by default. hyperd sends ~4 MiB
/// messages; with the 64 KiB protocol default every message would stall on
/// window updates. The windows also bound what is buffered per stream and
/// per connection.
pub const DEFAULT_STREAM_WINDOW: u32 = 8 << 20;

/// HTTP/2 connection receive window by default (all streams together).
pub const DEFAULT_CONNECTION_WINDOW: u32 = 16 << 20;

/// The largest HTTP/2 DATA frame the server may send, by default. The
/// protocol's 16 KiB cuts each of hyperd's ~4 MiB messages into ~256
/// frames, each handled by h2 and copied into tonic's buffer on its own.
/// Measured (`grpc_benchmark_tests`, SYNC, 10M rows, two runs): 256 KiB
/// frames took a scan from 80-85 % to 97 % of the PG wire's speed and the
/// client's CPU for it down by 4-11 %; 64 KiB, 1 MiB and 16 MiB frames
/// also beat 16 KiB, but less evenly.
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 256 << 10;

/// The smallest window accepted: the HTTP/2 default (RFC 9113, 6.9.2).
const MIN_WINDOW: u32 = 65_535;
/// The largest window HTTP/2 allows (2^31 - 1).
const MAX_WINDOW: u32 = (1 << 31) - 1;
/// The frame size limits of HTTP/2 (RFC 9113, 6.5.2).
const MIN_FRAME_SIZE: u32 = 16_384;
const MAX_FRAME_SIZE: u32 = (1 << 24) - 1;

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
    pub(crate) stream_window: u32,
    pub(crate) connection_window: u32,
    pub(crate) adaptive_window: bool,
    pub(crate) max_frame_size: Option<u32>,
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
            stream_window: DEFAULT_STREAM_WINDOW,
            connection_window: DEFAULT_CONNECTION_WINDOW,
            adaptive_window: false,
            max_frame_size: Some(DEFAULT_MAX_FRAME_SIZE),
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

impl GrpcConfig {
    /// The HTTP/2 receive window of each stream (one query's result), in
    /// bytes ([`DEFAULT_STREAM_WINDOW`] by default): how much hyperd may
    /// send before the client acknowledges. From 65,535 (the HTTP/2
    /// default) to 2^31 - 1; other values fail [`GrpcClient::connect`]
    /// with a config error naming the value.
    ///
    /// [`GrpcClient::connect`]: super::GrpcClient::connect
    pub fn with_stream_window(mut self, bytes: u32) -> Self {
        self.stream_window = bytes;
        self
    }

    /// The HTTP/2 receive window of the connection (all streams
    /// together), in bytes ([`DEFAULT_CONNECTION_WINDOW`] by default); the
    /// same limits as [`GrpcConfig::with_stream_window`].
    pub fn with_connection_window(mut self, bytes: u32) -> Self {
        self.connection_window = bytes;
        self
    }

    /// HTTP/2 adaptive flow control (BDP estimation; off by default): the
    /// windows then grow with the measured bandwidth-delay product and the
    /// configured ones are only the start.
    pub fn with_adaptive_window(mut self, on: bool) -> Self {
        self.adaptive_window = on;
        self
    }

    /// The largest HTTP/2 DATA frame the server may send, in bytes
    /// ([`DEFAULT_MAX_FRAME_SIZE`] by default; `None` keeps the protocol's
    /// 16,384). From 16,384 to 2^24 - 1; other values fail
    /// [`GrpcClient::connect`] with a config error naming the value.
    ///
    /// [`GrpcClient::connect`]: super::GrpcClient::connect
    pub fn with_max_frame_size(mut self, bytes: Option<u32>) -> Self {
        self.max_frame_size = bytes;
        self
    }

    /// Checks the HTTP/2 settings against the protocol's limits (the h2
    /// crate panics on values outside them).
    pub(crate) fn check_http2(&self) -> Result<()> {
        for (what, value) in [
            ("stream window", self.stream_window),
            ("connection window", self.connection_window),
        ] {
            if !(MIN_WINDOW..=MAX_WINDOW).contains(&value) {
                return Err(Error::config(format!(
                    "gRPC {what} of {value} bytes: must be from {MIN_WINDOW} to {MAX_WINDOW}"
                )));
            }
        }
        if let Some(size) = self.max_frame_size {
            if !(MIN_FRAME_SIZE..=MAX_FRAME_SIZE).contains(&size) {
                return Err(Error::config(format!(
                    "gRPC max frame size of {size} bytes: must be from {MIN_FRAME_SIZE} \
                     to {MAX_FRAME_SIZE}"
                )));
            }
        }
        Ok(())
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
            .field("stream_window", &self.stream_window)
            .field("connection_window", &self.connection_window)
            .field("adaptive_window", &self.adaptive_window)
            .field("max_frame_size", &self.max_frame_size)
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
    fn frames_default_to_256_kib_and_none_is_http2s_own() {
        let c = GrpcConfig::new("http://h:1").expect("parse");
        assert_eq!(c.max_frame_size, Some(256 * 1024));
        assert_eq!(c.with_max_frame_size(None).max_frame_size, None);
    }

    #[test]
    fn http2_settings_are_checked() {
        let c = GrpcConfig::new("http://h:1").expect("parse");
        assert!(c.check_http2().is_ok());
        let ok = c
            .clone()
            .with_stream_window(65_535)
            .with_connection_window(MAX_WINDOW)
            .with_adaptive_window(true)
            .with_max_frame_size(Some(MAX_FRAME_SIZE));
        assert!(ok.check_http2().is_ok());
        for (bad, value) in [
            (c.clone().with_stream_window(1000), "1000"),
            (c.clone().with_stream_window(1 << 31), "2147483648"),
            (c.clone().with_connection_window(0), " 0 "),
            (c.clone().with_max_frame_size(Some(16_383)), "16383"),
            (c.clone().with_max_frame_size(Some(1 << 24)), "16777216"),
        ] {
            let e = bad.check_http2().expect_err("out of range");
            assert_eq!(e.kind(), crate::error::ErrorKind::Config, "{e}");
            assert!(e.to_string().contains(value.trim()), "{e}");
        }
    }

    #[test]
    fn debug_hides_header_values() {
        let c = GrpcConfig::new("http://h:1")
            .expect("parse")
            .with_header("authorization", "Bearer secret");
        assert!(!format!("{c:?}").contains("secret"));
    }
}

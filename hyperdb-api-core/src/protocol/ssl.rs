//! TLS negotiation on the PostgreSQL wire, without I/O or a TLS library:
//! the modes a connection can ask for, what the server's one-byte answer to
//! `SSLRequest` ([`frontend::ssl_request`](super::frontend::ssl_request))
//! means, and what each mode does with it. The drivers read the byte and
//! run the handshake.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// Whether and how a connection uses TLS, with libpq's `sslmode` meanings.
///
/// | mode | sends `SSLRequest` | server says no | certificate checked |
/// |---|---|---|---|
/// | `Disable` | no | - | - |
/// | `Prefer` | yes | plain connection | only against roots given explicitly |
/// | `Require` | yes | error | only against roots given explicitly |
/// | `VerifyCa` | yes | error | chain to a trusted root |
/// | `VerifyFull` | yes | error | chain, and the host name |
///
/// "Roots given explicitly" means `Config::with_root_certificate`: as a
/// root file does in libpq, they make `Prefer` and `Require` check the
/// chain (like `VerifyCa`); without them those two modes encrypt but take
/// any certificate, which stops eavesdropping but not an active attacker
/// posing as the server. A failed handshake is an error in every mode;
/// `Prefer` falls back to a plain connection only when the server answers
/// that it has no TLS (libpq also retries in plain after a failed
/// handshake, which lets an attacker on the path switch TLS off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// TLS if the server offers it, else plain.
    Prefer,
    /// TLS or fail.
    Require,
    /// TLS, and the server's certificate must chain to a trusted root.
    VerifyCa,
    /// [`SslMode::VerifyCa`], and the certificate must name the host
    /// connected to (or `Config::with_tls_server_name`).
    VerifyFull,
}

impl SslMode {
    /// Whether the connection starts with an `SSLRequest`.
    pub fn sends_request(self) -> bool {
        self != SslMode::Disable
    }

    /// Whether a connection without TLS is an error.
    pub fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        )
    }

    /// Whether the server's certificate must chain to a trusted root;
    /// `explicit_roots` is whether the caller named the roots.
    pub fn verifies_chain(self, explicit_roots: bool) -> bool {
        match self {
            SslMode::Disable => false,
            SslMode::Prefer | SslMode::Require => explicit_roots,
            SslMode::VerifyCa | SslMode::VerifyFull => true,
        }
    }

    /// Whether the certificate must name the host.
    pub fn verifies_host_name(self) -> bool {
        self == SslMode::VerifyFull
    }

    /// What to do after the server answered `SSLRequest`: `Ok(true)` to
    /// start the TLS handshake, `Ok(false)` to go on in plain, an
    /// [`ErrorKind::Tls`](crate::error::ErrorKind::Tls) error when this
    /// mode needs TLS and the server has none.
    pub fn on_answer(self, answer: SslAnswer) -> Result<bool> {
        match answer {
            SslAnswer::Accepted => Ok(true),
            SslAnswer::Refused if self.requires_tls() => Err(Error::tls(format!(
                "the server does not offer TLS (it answered `N` to SSLRequest), \
                 and sslmode is {self}; start hyperd with ssl_certificate and ssl_key, \
                 or use sslmode prefer or disable"
            ))),
            SslAnswer::Refused => Ok(false),
        }
    }

    /// libpq's spelling: `disable`, `prefer`, `require`, `verify-ca`,
    /// `verify-full`.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses libpq's spellings (see [`SslMode::as_str`]).
impl FromStr for SslMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<SslMode> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => {
                return Err(Error::config(format!(
                    "sslmode `{s}`: expected disable, prefer, require, verify-ca or verify-full"
                )))
            }
        })
    }
}

/// The server's answer to `SSLRequest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslAnswer {
    /// `S`: the TLS handshake follows.
    Accepted,
    /// `N`: no TLS; the connection goes on in plain.
    Refused,
}

impl SslAnswer {
    /// Reads the answer byte. The caller must read exactly this one byte
    /// before the handshake: bytes after an `S` that arrived before TLS was
    /// up could be anyone's (CVE-2021-23222), so they must reach the TLS
    /// layer, which rejects them, and never the protocol.
    pub fn parse(byte: u8) -> Result<SslAnswer> {
        match byte {
            b'S' => Ok(SslAnswer::Accepted),
            b'N' => Ok(SslAnswer::Refused),
            b'E' => Err(Error::tls(
                "the server answered SSLRequest with an error message: it does not \
                 understand TLS negotiation; use sslmode disable",
            )),
            other => Err(Error::protocol(format!(
                "the server answered SSLRequest with byte {other:#04x}; expected `S` or `N`"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    const MODES: [SslMode; 5] = [
        SslMode::Disable,
        SslMode::Prefer,
        SslMode::Require,
        SslMode::VerifyCa,
        SslMode::VerifyFull,
    ];

    #[test]
    fn answers_parse() {
        assert_eq!(SslAnswer::parse(b'S').unwrap(), SslAnswer::Accepted);
        assert_eq!(SslAnswer::parse(b'N').unwrap(), SslAnswer::Refused);
        let e = SslAnswer::parse(b'E').unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Tls);
        assert!(e.to_string().contains("does not understand"), "{e}");
        let e = SslAnswer::parse(b'R').unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(e.to_string().contains("0x52"), "{e}");
    }

    #[test]
    fn accepted_means_handshake_in_every_mode_that_asks() {
        for mode in MODES.into_iter().filter(|m| m.sends_request()) {
            assert!(mode.on_answer(SslAnswer::Accepted).unwrap(), "{mode}");
        }
        assert!(!SslMode::Disable.sends_request());
    }

    #[test]
    fn refused_falls_back_only_under_prefer() {
        assert!(!SslMode::Prefer.on_answer(SslAnswer::Refused).unwrap());
        for mode in [SslMode::Require, SslMode::VerifyCa, SslMode::VerifyFull] {
            let e = mode.on_answer(SslAnswer::Refused).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Tls, "{mode}");
            assert!(e.to_string().contains(mode.as_str()), "{e}");
            assert!(e.to_string().contains("does not offer TLS"), "{e}");
        }
    }

    #[test]
    fn what_each_mode_checks() {
        let chain: Vec<_> = MODES.iter().map(|m| m.verifies_chain(false)).collect();
        assert_eq!(chain, [false, false, false, true, true]);
        let chain: Vec<_> = MODES.iter().map(|m| m.verifies_chain(true)).collect();
        assert_eq!(chain, [false, true, true, true, true]);
        let host: Vec<_> = MODES.iter().map(|m| m.verifies_host_name()).collect();
        assert_eq!(host, [false, false, false, false, true]);
    }

    #[test]
    fn libpq_spellings_round_trip() {
        for mode in MODES {
            assert_eq!(mode.as_str().parse::<SslMode>().unwrap(), mode);
            assert_eq!(mode.to_string(), mode.as_str());
        }
        let e = "verify_full".parse::<SslMode>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert!(e.to_string().contains("verify_full"), "{e}");
    }
}

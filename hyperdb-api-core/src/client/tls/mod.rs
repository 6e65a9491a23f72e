//! TLS on the PostgreSQL wire with rustls and ring (feature `tls`).
//!
//! * this module: the rustls config a [`Config`] asks for (roots,
//!   verifier, key exchange groups), cached per config, and the errors a
//!   failed handshake turns into;
//! * [`verify`]: the certificate checks of the modes below `VerifyFull`;
//! * [`session`]: the record layer both drivers share, with no I/O;
//! * [`stream`] / `async_stream`: the std and tokio sockets around it,
//!   and the `SSLRequest` exchange that starts it.

#[cfg(feature = "tokio")]
mod async_stream;
mod session;
mod stream;
#[cfg(test)]
mod tests;
mod verify;

use std::sync::{Arc, OnceLock};

use rustls::client::Resumption;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{CertificateError, ClientConfig, RootCertStore};

use crate::client::config::{Config, Endpoint};
use crate::error::{Error, Result};
use crate::protocol::ssl::SslMode;

#[cfg(feature = "tokio")]
pub(crate) use async_stream::negotiate_async;
#[cfg(feature = "tokio")]
pub use async_stream::AsyncTlsStream;
pub(crate) use stream::negotiate;
pub use stream::TlsStream;

/// The rustls config of a [`Config`], built on first use (building loads
/// and parses roots) and shared by its clones.
pub(crate) type ConfigCache = Arc<OnceLock<Arc<ClientConfig>>>;

/// The rustls config for `config`, from its cache when built.
pub(crate) fn client_config(config: &Config) -> Result<Arc<ClientConfig>> {
    if let Some(built) = config.tls_cache.get() {
        return Ok(built.clone());
    }
    let built = Arc::new(build(config, config.ssl_mode())?);
    // A racing connect may have set it first; either is right.
    Ok(config.tls_cache.get_or_init(|| built).clone())
}

fn build(config: &Config, mode: SslMode) -> Result<ClientConfig> {
    let provider = Arc::new(provider());
    let explicit = !config.root_certificates.is_empty();
    let roots = if explicit {
        Arc::new(explicit_roots(&config.root_certificates)?)
    } else if mode.verifies_chain(false) {
        system_roots()?
    } else {
        // Nothing is checked, so no roots are needed (nor loaded).
        Arc::new(RootCertStore::empty())
    };
    let verifier = verify::for_mode(mode, explicit, roots, &provider)?;
    let mut tls = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config(format!("TLS protocol versions: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // hyperd 0.0.26963 hands out session tickets but fails every handshake
    // that offers one back ("session id context uninitialized", measured),
    // which broke each second connection of a config, cancels included.
    tls.resumption = Resumption::disabled();
    Ok(tls)
}

/// ring's provider with P-256 first among the key exchange groups:
/// hyperd 0.0.26963 offers only P-256 (measured; X25519 and P-384 are
/// refused), and rustls sends a key share for the first group only, so
/// leading with X25519 would cost every handshake a HelloRetryRequest
/// round trip. Other servers still get X25519 and P-384.
fn provider() -> CryptoProvider {
    let mut provider = ring::default_provider();
    provider.kx_groups = vec![
        ring::kx_group::SECP256R1,
        ring::kx_group::X25519,
        ring::kx_group::SECP384R1,
    ];
    provider
}

fn explicit_roots(pems: &[Vec<u8>]) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    for (i, pem) in pems.iter().enumerate() {
        let what = || format!("root certificate #{} (with_root_certificate)", i + 1);
        let mut found = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| Error::config(format!("{}: bad PEM: {e}", what())))?;
            roots
                .add(cert)
                .map_err(|e| Error::config(format!("{}: not a usable CA: {e}", what())))?;
            found += 1;
        }
        if found == 0 {
            return Err(Error::config(format!(
                "{}: no PEM CERTIFICATE block in it",
                what()
            )));
        }
    }
    Ok(roots)
}

/// The operating system's root certificates, read once per process
/// (reading them takes milliseconds).
fn system_roots() -> Result<Arc<RootCertStore>> {
    static ROOTS: OnceLock<Arc<RootCertStore>> = OnceLock::new();
    if let Some(roots) = ROOTS.get() {
        return Ok(roots.clone());
    }
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map_or_else(|| "none found".to_owned(), |e| e.to_string());
        return Err(Error::config(format!(
            "no system root certificates to verify the server with ({why}); \
             pass the server's CA with with_root_certificate"
        )));
    }
    Ok(ROOTS.get_or_init(|| Arc::new(roots)).clone())
}

/// The name the certificate is checked against (under `VerifyFull`) and
/// sent as SNI.
pub(crate) fn server_name(config: &Config) -> Result<ServerName<'static>> {
    let name = match (&config.tls_server_name, &config.endpoint) {
        (Some(name), _) => name.as_str(),
        (None, Endpoint::Tcp { host, .. }) => host.as_str(),
        (None, Endpoint::Unix(_)) => {
            return Err(Error::config("TLS needs a TCP endpoint"));
        }
    };
    ServerName::try_from(name.to_owned()).map_err(|e| {
        Error::config(format!(
            "`{name}` cannot be checked against a certificate: {e}"
        ))
    })
}

/// Reading the server's one-byte answer to `SSLRequest` failed.
pub(crate) fn answer_error(endpoint: &Endpoint, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::closed(format!(
            "{endpoint} closed the connection instead of answering SSLRequest"
        )),
        _ => Error::io(
            format!("reading the answer to SSLRequest from {endpoint}"),
            e,
        ),
    }
}

/// The handshake's I/O failed: rustls's own refusal as
/// [`handshake_error`], anything else as I/O.
pub(crate) fn handshake_failure(config: &Config, mode: SslMode, e: std::io::Error) -> Error {
    match session::rustls_error(&e) {
        Some(tls) => handshake_error(config, mode, tls),
        None => Error::io(format!("TLS handshake with {}", config.endpoint), e),
    }
}

/// The server hung up in the middle of the handshake.
fn closed_in_handshake() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "the server closed the connection during the TLS handshake",
    )
}

/// A failed handshake as an [`ErrorKind::Tls`](crate::error::ErrorKind::Tls)
/// error that says what was refused and what to do about it, keeping
/// rustls's error as the source.
pub(crate) fn handshake_error(config: &Config, mode: SslMode, e: rustls::Error) -> Error {
    let endpoint = &config.endpoint;
    let why = match &e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            if config.root_certificates.is_empty() {
                ": its certificate is not signed by a root this machine trusts \
                 (pass the server's CA to with_root_certificate)"
                    .to_owned()
            } else {
                ": its certificate is not signed by the roots given to with_root_certificate"
                    .to_owned()
            }
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => {
            let name = server_name(config).map_or_else(|_| "?".to_owned(), |n| n.to_str().into());
            format!(
                ": its certificate is not for `{name}` (sslmode verify-full checks the name; \
                 connect with the name the certificate carries, or set with_tls_server_name)"
            )
        }
        rustls::Error::InvalidCertificate(CertificateError::BadSignature) => {
            ": its certificate is not signed by the key of the trusted root of that name".to_owned()
        }
        rustls::Error::InvalidCertificate(_) => ": its certificate was refused".to_owned(),
        _ => String::new(),
    };
    Error::tls(format!(
        "TLS handshake with {endpoint} failed under sslmode {mode}{why}"
    ))
    .with_source(e)
}

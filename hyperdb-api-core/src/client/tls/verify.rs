//! What each `SslMode` checks of the server's certificate. `VerifyFull` is
//! rustls's own WebPKI verifier; the weaker modes are that verifier with
//! parts left out, never a verifier of our own making: `VerifyCa` drops
//! the name check, `Prefer` / `Require` without explicit roots drop the
//! chain check too. Every mode still checks the handshake signature, so
//! the server holds the key of the certificate it shows.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, WebPkiServerVerifier};
use rustls::crypto::{
    verify_tls12_signature, verify_tls13_signature, CryptoProvider, WebPkiSupportedAlgorithms,
};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::{Error, Result};
use crate::protocol::ssl::SslMode;

/// The verifier `mode` calls for; `explicit_roots` is whether the caller
/// named the roots (which makes `Prefer` and `Require` check the chain).
pub(super) fn for_mode(
    mode: SslMode,
    explicit_roots: bool,
    roots: Arc<RootCertStore>,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>> {
    let algorithms = provider.signature_verification_algorithms;
    if mode.verifies_host_name() {
        let full = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| Error::config(format!("TLS certificate verifier: {e}")))?;
        return Ok(full);
    }
    let check_chain = mode.verifies_chain(explicit_roots);
    Ok(Arc::new(Partial {
        roots: check_chain.then_some(roots),
        algorithms,
    }))
}

/// The chain check without the name (`roots` given), or no certificate
/// check at all (`roots` is `None`).
struct Partial {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl std::fmt::Debug for Partial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partial")
            .field("checks_chain", &self.roots.is_some())
            .finish()
    }
}

impl ServerCertVerifier for Partial {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

//! gRPC over TLS: a TLS-terminating proxy in front of the shared server's
//! gRPC port, with a certificate from a throwaway CA. Untrusted, the
//! connection is refused with a clear error; with the CA trusted, queries
//! run through it.

use std::net::SocketAddr;
use std::sync::Arc;

use hyperdb_api::{GrpcConfig, GrpcConnectOptions, GrpcConnection};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{crypto::ring, ServerConfig};
use tokio_rustls::TlsAcceptor;

use super::endpoint;

/// A CA (PEM) and a `localhost` certificate (DER) with its key, signed by it.
fn certificates() -> (String, CertificateDer<'static>, PrivateKeyDer<'static>) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (ca.pem(), leaf.der().clone(), key)
}

/// Accepts TLS (ALPN h2) and forwards the plaintext to `upstream`, on a
/// runtime of its own that lives as long as the returned value.
fn start_proxy(upstream: SocketAddr) -> (tokio::runtime::Runtime, SocketAddr, String) {
    let (ca_pem, cert, key) = certificates();
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A refused handshake is what one test wants; ignore it.
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let Ok(mut up) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
            });
        }
    });
    (rt, addr, ca_pem)
}

#[test]
fn untrusted_certificates_are_refused_and_trusted_ones_work() {
    let upstream: SocketAddr = endpoint().trim_start_matches("http://").parse().unwrap();
    let (_rt, addr, ca_pem) = start_proxy(upstream);
    let uri = format!("https://localhost:{}", addr.port());

    let e = GrpcConnection::connect(&uri).unwrap_err();
    let text = e.to_string();
    assert!(text.contains(&uri), "{text}");
    assert!(
        text.contains("invalid peer certificate: UnknownIssuer"),
        "{text}"
    );

    let config = GrpcConfig::new(&uri)
        .unwrap()
        .with_ca_certificate(ca_pem.clone());
    let c = GrpcConnection::connect_with(&GrpcConnectOptions::new(config)).unwrap();
    assert_eq!(c.query_scalar::<i32>("SELECT 7").unwrap(), 7);
    let n: i64 = c
        .query_arrow("SELECT i FROM generate_series(1, 100000) g(i)")
        .unwrap()
        .map(|b| b.unwrap().num_rows() as i64)
        .sum();
    assert_eq!(n, 100_000);

    // The name is checked too: the certificate is for localhost only.
    let ip = format!("https://127.0.0.1:{}", addr.port());
    let config = GrpcConfig::new(&ip).unwrap().with_ca_certificate(ca_pem);
    let e = GrpcConnection::connect_with(&GrpcConnectOptions::new(config)).unwrap_err();
    assert!(e.to_string().contains("certificate"), "{e}");
}

//! The record layer and config building against an in-memory rustls
//! server: no sockets, no hyperd (the live tests cover hyperd).

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection};

use super::session::{rustls_error, Plaintext, TlsSession};
use super::{client_config, handshake_error, provider, server_name};
use crate::client::config::{Config, Endpoint};
use crate::error::ErrorKind;
use crate::protocol::ssl::SslMode;

/// A server for `localhost` and the PEM of the CA that signed it.
fn new_server() -> (ServerConnection, String) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let config = ServerConfig::builder_with_provider(Arc::new(provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    (ServerConnection::new(Arc::new(config)).unwrap(), ca.pem())
}

fn new_client(config: &Config) -> TlsSession {
    TlsSession::new(
        client_config(config).unwrap(),
        server_name(config).unwrap(),
        1 << 20,
    )
    .unwrap()
}

fn deliver(client: &mut TlsSession, bytes: &[u8]) {
    let buf = client.recv_buf();
    assert!(bytes.len() <= buf.len(), "fits the read window");
    buf[..bytes.len()].copy_from_slice(bytes);
    client.received(bytes.len());
}

/// Moves the client's queued bytes to the server and the server's reply
/// into the client's receive buffer.
fn pump(client: &mut TlsSession, server: &mut ServerConnection) -> Result<(), rustls::Error> {
    let out = client.pending().to_vec();
    client.sent(out.len());
    let mut rd = &out[..];
    while !rd.is_empty() {
        server.read_tls(&mut rd).unwrap();
        server.process_new_packets()?;
    }
    let mut back = Vec::new();
    while server.wants_write() {
        server.write_tls(&mut back).unwrap();
    }
    deliver(client, &back);
    Ok(())
}

fn connected(mode: SslMode) -> (TlsSession, ServerConnection) {
    let (mut server, ca) = new_server();
    let config = Config::new(Endpoint::tcp("localhost", 1))
        .with_ssl_mode(mode)
        .with_root_certificate(ca);
    let mut client = new_client(&config);
    for _ in 0..4 {
        pump(&mut client, &mut server).unwrap();
        if client.advance_handshake().unwrap() {
            pump(&mut client, &mut server).unwrap();
            return (client, server);
        }
    }
    panic!("no handshake after 4 round trips");
}

#[test]
fn records_decrypt_within_the_callers_window() {
    let (mut client, mut server) = connected(SslMode::VerifyFull);
    assert_eq!(client.info().protocol_version, "TLSv1_3");
    assert_eq!(client.info().key_exchange, "secp256r1");
    let sent: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    server.set_buffer_limit(None);
    std::io::Write::write_all(&mut server.writer(), &sent).unwrap();
    let mut wire = Vec::new();
    while server.wants_write() {
        server.write_tls(&mut wire).unwrap();
    }
    deliver(&mut client, &wire);
    let mut got = Vec::new();
    // 13 records of <= 16 KiB, taken 50,000 bytes at a time.
    loop {
        match client
            .read_plaintext(50_000, |b| got.extend_from_slice(b))
            .unwrap()
        {
            Plaintext::Data(n) => assert!(n <= 50_000),
            Plaintext::NeedInput => break,
            Plaintext::Eof => panic!("no EOF was sent"),
        }
    }
    assert_eq!(got, sent);

    // And the other way.
    client.encrypt(b"hello").unwrap();
    pump(&mut client, &mut server).unwrap();
    let mut text = [0u8; 5];
    std::io::Read::read_exact(&mut server.reader(), &mut text).unwrap();
    assert_eq!(&text, b"hello");

    // The server's close_notify ends the stream; so does a socket EOF.
    server.send_close_notify();
    pump(&mut client, &mut server).unwrap();
    assert_eq!(client.read_plaintext(10, |_| {}).unwrap(), Plaintext::Eof);
    let (mut client, _) = connected(SslMode::Require);
    client.received(0);
    assert_eq!(client.read_plaintext(10, |_| {}).unwrap(), Plaintext::Eof);
}

#[test]
fn garbage_instead_of_records_is_a_tls_error() {
    let (mut client, _) = connected(SslMode::Require);
    deliver(&mut client, b"R\0\0\0\x08\0\0\0\0");
    let e = client.read_plaintext(10, |_| {}).unwrap_err();
    assert!(rustls_error(&e).is_some(), "{e}");
}

#[test]
fn the_name_is_checked_under_verify_full_only() {
    let (mut server, ca) = new_server();
    let config = Config::new(Endpoint::tcp("127.0.0.1", 1))
        .with_ssl_mode(SslMode::VerifyFull)
        .with_root_certificate(ca);
    let mut client = new_client(&config);
    pump(&mut client, &mut server).unwrap();
    let e = client.advance_handshake().unwrap_err();
    let e = handshake_error(&config, SslMode::VerifyFull, rustls_error(&e).unwrap());
    assert_eq!(e.kind(), ErrorKind::Tls);
    assert!(e.to_string().contains("not for `127.0.0.1`"), "{e}");
    assert!(e.to_string().contains("sslmode verify-full"), "{e}");

    let (mut server, ca) = new_server();
    let config = Config::new(Endpoint::tcp("127.0.0.1", 1))
        .with_ssl_mode(SslMode::VerifyCa)
        .with_root_certificate(ca);
    let mut client = new_client(&config);
    pump(&mut client, &mut server).unwrap();
    assert!(
        client.advance_handshake().unwrap(),
        "verify-ca takes the name"
    );
}

#[test]
fn bad_roots_fail_as_config_errors() {
    let config = |pem: &str| {
        Config::new(Endpoint::tcp("h", 1))
            .with_ssl_mode(SslMode::VerifyCa)
            .with_root_certificate(pem)
    };
    let e = client_config(&config("not a pem")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.to_string().contains("no PEM CERTIFICATE block"), "{e}");
    let e = client_config(&config(
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    ))
    .unwrap_err();
    assert!(e.to_string().contains("root certificate #1"), "{e}");
}

#[test]
fn clones_share_the_built_config_and_setters_rebuild_it() {
    let (_, ca) = new_server();
    let a = Config::new(Endpoint::tcp("h", 1)).with_root_certificate(ca);
    let b = a.clone();
    assert!(Arc::ptr_eq(
        &client_config(&a).unwrap(),
        &client_config(&b).unwrap()
    ));
    let c = b.with_tls_server_name("other");
    assert!(!Arc::ptr_eq(
        &client_config(&a).unwrap(),
        &client_config(&c).unwrap()
    ));
}

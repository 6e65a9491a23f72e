//! TLS on the PostgreSQL wire against hyperd started with a certificate
//! from a throwaway CA (rcgen): which certificates each `SslMode` accepts
//! and refuses, plain fallbacks, and queries, inserts and cancels through
//! TLS, sync and async.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    AsyncConnection, ConnectOptions, Connection, CreateMode, Endpoint, Error, ErrorKind,
    HyperProcess, HyperProcessOptions, Inserter, Listen, SqlState, SslMode, TableDefinition,
};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use super::common::{tcp_server, temp_dir};

/// A CA, and a server certificate it signed, as PEM files in `dir`.
struct Pki {
    dir: tempfile::TempDir,
    ca_pem: String,
    cert: PathBuf,
    key: PathBuf,
}

/// A CA with a name of its own (two CAs of one name would meet a
/// signature check, not an unknown issuer).
fn ca() -> CertifiedIssuer<'static, KeyPair> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    let n = N.fetch_add(1, Ordering::Relaxed);
    params.distinguished_name.push(
        DnType::CommonName,
        format!("throwaway CA {} {n}", std::process::id()),
    );
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// hyperd refuses a key file others may read (measured: "Permissions for
/// 'ssl_key' have to be 0600").
fn write_private(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A certificate for `names` (host names or IP addresses).
fn pki(names: &[&str]) -> Pki {
    let ca = ca();
    let key = KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let leaf = CertificateParams::new(names)
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let dir = temp_dir();
    let cert = dir.path().join("server.pem");
    let key_path = dir.path().join("server.key");
    std::fs::write(&cert, leaf.pem()).unwrap();
    write_private(&key_path, &key.serialize_pem());
    std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
    Pki {
        dir,
        ca_pem: ca.pem(),
        cert,
        key: key_path,
    }
}

/// The shared TLS server: a certificate for `localhost` and `127.0.0.1`.
///
/// hyperd reads its certificate and key once, at start, so their directory
/// is removed as soon as it runs: a static is never dropped, and the
/// directory would otherwise outlive every test run.
fn tls_server() -> &'static (HyperProcess, String) {
    static SERVER: OnceLock<(HyperProcess, String)> = OnceLock::new();
    SERVER.get_or_init(|| {
        let pki = pki(&["localhost", "127.0.0.1"]);
        let server = HyperProcess::new(
            HyperProcessOptions::default()
                .with_tls(&pki.cert, &pki.key)
                .with_tls_root_certificate(pki.dir.path().join("ca.pem")),
        )
        .unwrap();
        (server, pki.ca_pem)
    })
}

fn port() -> u16 {
    match tls_server().0.endpoint() {
        Endpoint::Tcp { port, .. } => *port,
        other => panic!("TLS server on {other}"),
    }
}

/// Options for the TLS server under `mode`, trusting nothing explicitly.
fn opts(host: &str, mode: SslMode) -> ConnectOptions {
    ConnectOptions::new(Endpoint::tcp(host, port()))
        .with_password(tls_server().0.password().unwrap())
        .with_ssl_mode(mode)
}

fn tls_error(e: Error, wants: &str) {
    assert_eq!(e.kind(), Some(ErrorKind::Tls), "{e:?}");
    assert_eq!(e.sqlstate(), "08001");
    let text = e.to_string();
    assert!(text.contains(wants), "{text}");
}

fn scalar(options: &ConnectOptions) -> Result<i64, Error> {
    let mut c = Connection::connect_with(options)?;
    c.query_scalar::<i64>("SELECT 6 * 7")
}

#[test]
fn verify_full_accepts_the_servers_certificate() {
    let (server, _) = tls_server();
    assert!(server.tls());
    assert_eq!(server.config().ssl_mode(), SslMode::VerifyFull);
    let mut c = Connection::connect_with(&ConnectOptions::from(server.config())).unwrap();
    let info = c.tls_info().expect("TLS");
    assert_eq!(info.protocol_version, "TLSv1_3");
    // P-256 first: hyperd offers no other group, and no HelloRetryRequest.
    assert_eq!(info.key_exchange, "secp256r1");
    assert_eq!(c.query_scalar::<i64>("SELECT 6 * 7").unwrap(), 42);
    // By name as well as by address.
    let ca = tls_server().1.clone();
    let named = opts("localhost", SslMode::VerifyFull).with_root_certificate(ca);
    assert_eq!(scalar(&named).unwrap(), 42);
}

#[tokio::test]
async fn verify_full_accepts_the_servers_certificate_async() {
    let (server, _) = tls_server();
    let options = ConnectOptions::from(server.config());
    let mut c = AsyncConnection::connect_with(&options).await.unwrap();
    assert!(c.tls_info().is_some());
    let n: i64 = c
        .query_scalar("SELECT count(*) FROM generate_series(1, 300000)")
        .await
        .unwrap();
    assert_eq!(n, 300_000);
    let e = AsyncConnection::connect_with(
        &opts("127.0.0.1", SslMode::VerifyFull).with_root_certificate(ca().pem()),
    )
    .await
    .unwrap_err();
    tls_error(e, "not signed by the roots given");
}

#[test]
fn an_untrusted_ca_is_refused() {
    // Another CA's root: the chain does not lead to it.
    let other = opts("127.0.0.1", SslMode::VerifyFull).with_root_certificate(ca().pem());
    tls_error(scalar(&other).unwrap_err(), "not signed by the roots given");
    // No root given: the system's roots, which do not know the test CA.
    let system = opts("127.0.0.1", SslMode::VerifyCa);
    let e = scalar(&system).unwrap_err();
    if e.to_string().contains("no system root certificates") {
        // A machine without a CA bundle: refused before any handshake.
        assert_eq!(e.kind(), Some(ErrorKind::Config), "{e:?}");
    } else {
        tls_error(e, "not signed by a root this machine trusts");
    }
    // The message names the endpoint and the mode.
    let e = scalar(&other).unwrap_err().to_string();
    assert!(e.contains(&format!("127.0.0.1:{}", port())), "{e}");
    assert!(e.contains("sslmode verify-full"), "{e}");
    // Explicit roots make `require` check the chain too, as in libpq.
    let require = opts("127.0.0.1", SslMode::Require).with_root_certificate(ca().pem());
    tls_error(
        scalar(&require).unwrap_err(),
        "not signed by the roots given",
    );
}

#[test]
fn the_host_name_is_checked_under_verify_full_only() {
    let ca = tls_server().1.clone();
    let wrong = |mode| {
        opts("127.0.0.1", mode)
            .with_root_certificate(ca.clone())
            .with_tls_server_name("db.example.com")
    };
    let e = scalar(&wrong(SslMode::VerifyFull)).unwrap_err();
    tls_error(e, "not for `db.example.com`");
    assert_eq!(scalar(&wrong(SslMode::VerifyCa)).unwrap(), 42);
    assert_eq!(scalar(&wrong(SslMode::Require)).unwrap(), 42);
}

#[test]
fn prefer_and_require_encrypt_without_checking_when_no_root_is_given() {
    for mode in [SslMode::Prefer, SslMode::Require] {
        let c = Connection::connect_with(&opts("127.0.0.1", mode)).unwrap();
        assert!(c.tls_info().is_some(), "{mode}");
    }
    // hyperd without `ssl_force` still takes plain clients.
    let mut c = Connection::connect_with(&opts("127.0.0.1", SslMode::Disable)).unwrap();
    assert!(c.tls_info().is_none());
    assert_eq!(c.query_scalar::<i64>("SELECT 1").unwrap(), 1);
    // The default on loopback is plain.
    let c = Connection::connect_with(
        &ConnectOptions::new(Endpoint::tcp("127.0.0.1", port()))
            .with_password(tls_server().0.password().unwrap()),
    )
    .unwrap();
    assert!(c.tls_info().is_none());
}

#[test]
fn a_plain_server_is_refused_by_require_and_used_by_prefer() {
    let plain = tcp_server().endpoint().clone();
    let password = tcp_server().password().unwrap();
    for mode in [SslMode::Require, SslMode::VerifyCa, SslMode::VerifyFull] {
        let options = ConnectOptions::new(plain.clone())
            .with_password(password)
            .with_ssl_mode(mode);
        tls_error(scalar(&options).unwrap_err(), "does not offer TLS");
    }
    let options = ConnectOptions::new(plain)
        .with_password(password)
        .with_ssl_mode(SslMode::Prefer);
    let mut c = Connection::connect_with(&options).unwrap();
    assert!(c.tls_info().is_none(), "fell back to plain");
    assert_eq!(c.query_scalar::<i64>("SELECT 2").unwrap(), 2);
}

#[tokio::test]
async fn a_plain_server_is_refused_by_require_and_used_by_prefer_async() {
    let plain = tcp_server().endpoint().clone();
    let password = tcp_server().password().unwrap();
    let options = ConnectOptions::new(plain.clone())
        .with_password(password)
        .with_ssl_mode(SslMode::Require);
    let e = AsyncConnection::connect_with(&options).await.unwrap_err();
    tls_error(e, "does not offer TLS");
    let options = ConnectOptions::new(plain)
        .with_password(password)
        .with_ssl_mode(SslMode::Prefer);
    let c = AsyncConnection::connect_with(&options).await.unwrap();
    assert!(c.tls_info().is_none());
}

#[test]
fn a_unix_socket_refuses_the_modes_that_need_tls() {
    let options =
        ConnectOptions::new(Endpoint::unix("/nonexistent/pgsql")).with_ssl_mode(SslMode::Require);
    let e = scalar(&options).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::Config), "{e:?}");
    assert!(e.to_string().contains("needs a TCP endpoint"), "{e}");
}

const ROWS: i64 = 1_000_000;

fn series() -> String {
    format!(
        "SELECT i::BIGINT FROM generate_series(0, {}) g(i)",
        ROWS - 1
    )
}

#[test]
fn queries_inserts_and_cancels_run_through_tls() {
    let (server, _) = tls_server();
    let dir = temp_dir();
    // The query timeout only bounds the test should the cancel be lost.
    let options = ConnectOptions::from(server.config())
        .with_database(dir.path().join("tls.hyper"), CreateMode::Create)
        .with_query_timeout(Some(Duration::from_secs(120)));
    let mut c = Connection::connect_with(&options).unwrap();
    assert!(c.tls_info().is_some());
    let table = TableDefinition::new("t")
        .with_not_null_column("i", SqlType::BigInt)
        .with_not_null_column("s", SqlType::Text);
    c.catalog().create_table(&table).unwrap();
    // Several MiB through COPY: many TLS records per flush.
    let mut ins = Inserter::new(&mut c, &table).unwrap();
    for i in 0..200_000i64 {
        ins.add_row(&[&i, &format!("row {i}")]).unwrap();
    }
    assert_eq!(ins.execute().unwrap(), 200_000);
    let (n, sum, len): (i64, i64, i64) = {
        let mut rows = c
            .execute_query("SELECT count(*), sum(i), sum(length(s)) FROM t")
            .unwrap();
        let row = rows.next().unwrap().unwrap();
        (
            row.try_get(0).unwrap(),
            row.try_get(1).unwrap(),
            row.try_get(2).unwrap(),
        )
    };
    assert_eq!((n, sum), (200_000, 199_999 * 200_000 / 2));
    let want_len: i64 = (0..200_000i64)
        .map(|i| format!("row {i}").len() as i64)
        .sum();
    assert_eq!(len, want_len);
    // A read of many windows: every row (hyperd may reorder them).
    let (mut n, mut sum) = (0i64, 0i64);
    for row in c.execute_query(&series()).unwrap() {
        sum += row.unwrap().try_get::<i64>(0).unwrap();
        n += 1;
    }
    assert_eq!((n, sum), (ROWS, ROWS * (ROWS - 1) / 2));

    // The cancel request travels over TLS too.
    let handle = c.cancel_handle();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        handle.cancel()
    });
    let e = c
        .execute_command(
            "SELECT count(*) FROM generate_series(1, 100000000000) a(x) WHERE x % 7 = 3",
        )
        .unwrap_err();
    canceller.join().unwrap().unwrap();
    assert_eq!(e.code(), Some(&SqlState::QUERY_CANCELED), "{e}");
    assert_eq!(c.query_scalar::<i64>("SELECT 3").unwrap(), 3);
    c.close().unwrap();
}

#[tokio::test]
async fn queries_and_cancels_run_through_tls_async() {
    let (server, _) = tls_server();
    let options =
        ConnectOptions::from(server.config()).with_query_timeout(Some(Duration::from_secs(120)));
    let mut c = AsyncConnection::connect_with(&options).await.unwrap();
    let mut rows = c.execute_query(&series()).await.unwrap();
    let (mut n, mut sum) = (0i64, 0i64);
    while let Some(row) = rows.next_row().await {
        sum += row.unwrap().try_get::<i64>(0).unwrap();
        n += 1;
    }
    assert_eq!((n, sum), (ROWS, ROWS * (ROWS - 1) / 2));
    drop(rows);
    let handle = c.cancel_handle();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        handle.cancel_async().await
    });
    let e = c
        .execute_command(
            "SELECT count(*) FROM generate_series(1, 100000000000) a(x) WHERE x % 7 = 3",
        )
        .await
        .unwrap_err();
    canceller.await.unwrap().unwrap();
    assert_eq!(e.code(), Some(&SqlState::QUERY_CANCELED), "{e}");
    assert_eq!(c.query_scalar::<i64>("SELECT 4").await.unwrap(), 4);
}

#[test]
fn ssl_force_refuses_plain_tcp_even_on_loopback() {
    let pki = pki(&["127.0.0.1"]);
    let server = HyperProcess::new(
        HyperProcessOptions::default()
            .with_tls(&pki.cert, &pki.key)
            .with_tls_root_certificate(pki.dir.path().join("ca.pem"))
            .with_param("ssl_force", "1"),
    )
    .unwrap();
    let plain = server.connect_options().with_ssl_mode(SslMode::Disable);
    let e = scalar(&plain).unwrap_err();
    assert_eq!(e.sqlstate(), "08000", "{e}");
    assert!(e.to_string().contains("only SSL connections"), "{e}");
    assert_eq!(scalar(&ConnectOptions::from(server.config())).unwrap(), 42);
}

#[test]
fn process_tls_options_are_checked_before_starting() {
    let e = HyperProcess::new(
        HyperProcessOptions::default()
            .with_tls("c.pem", "k.pem")
            .with_listen(Listen::Unix),
    )
    .unwrap_err();
    assert!(e.to_string().contains("TLS over TCP only"), "{e}");
    let e = HyperProcess::new(HyperProcessOptions::default().with_tls_root_certificate("ca.pem"))
        .unwrap_err();
    assert!(e.to_string().contains("without with_tls"), "{e}");
    // hyperd itself refuses files it cannot use, and says why.
    let pki = pki(&["127.0.0.1"]);
    let missing = pki.dir.path().join("missing.pem");
    let e =
        HyperProcess::new(HyperProcessOptions::default().with_tls(&missing, &pki.key)).unwrap_err();
    assert!(matches!(e, Error::ProcessStart { .. }), "{e:?}");
    assert!(
        e.to_string().contains("Initialization of SSL failed"),
        "{e}"
    );
    let readable = pki.dir.path().join("readable.key");
    std::fs::copy(&pki.key, &readable).unwrap();
    std::fs::set_permissions(
        &readable,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let e = HyperProcess::new(HyperProcessOptions::default().with_tls(&pki.cert, &readable))
        .unwrap_err();
    assert!(e.to_string().contains("have to be 0600"), "{e}");
}

/// A fake server that answers `S` and then sends bytes of its own before
/// any handshake (CVE-2021-23222): they must reach the TLS layer, which
/// refuses them, never the protocol.
#[test]
fn bytes_injected_after_the_answer_fail_the_handshake() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let fake = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut request = [0u8; 8];
        s.read_exact(&mut request).unwrap();
        s.write_all(b"SR\0\0\0\x08\0\0\0\0").unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        request
    });
    let options =
        ConnectOptions::new(Endpoint::tcp("127.0.0.1", port)).with_ssl_mode(SslMode::Require);
    let e = scalar(&options).unwrap_err();
    tls_error(e, "TLS handshake");
    assert_eq!(fake.join().unwrap(), [0, 0, 0, 8, 4, 210, 22, 47]);
}

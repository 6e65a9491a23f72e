//! Password authentication against a hyperd that requires one (SCRAM-SHA-256).

use hyperdb_api::{
    AsyncConnection, AuthMethod, AuthMethods, ConnectOptions, Connection, HyperProcess,
    HyperProcessOptions,
};

use crate::common;

const PASSWORD: &str = "s3cret pä";

fn password_server() -> HyperProcess {
    HyperProcess::new(HyperProcessOptions::default().with_password(PASSWORD)).unwrap()
}

#[test]
fn scram_right_wrong_and_missing_password() {
    let hyper = password_server();
    let ep = hyper.endpoint().clone();

    let mut c =
        Connection::connect_with(&ConnectOptions::new(ep.clone()).with_password(PASSWORD)).unwrap();
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);

    let e = Connection::connect_with(&ConnectOptions::new(ep.clone()).with_password("wrong"))
        .unwrap_err();
    assert!(e.code().is_some(), "hyperd refuses with a SQLSTATE: {e:?}");

    let e = Connection::connect_with(&ConnectOptions::new(ep)).unwrap_err();
    assert_eq!(e.kind(), Some(hyperdb_api::ErrorKind::Auth), "{e:?}");
    assert!(e.to_string().contains("password"), "{e}");
}

#[tokio::test]
async fn scram_async() {
    let hyper = password_server();
    let opts = ConnectOptions::new(hyper.endpoint().clone()).with_password(PASSWORD);
    let mut c = AsyncConnection::connect_with(&opts).await.unwrap();
    assert_eq!(c.query_scalar::<i32>("SELECT 2").await.unwrap(), 2);
}

/// hyperd with a password asks for SCRAM-SHA-256, so a connection that
/// accepts nothing else gets in, and the default for a remote endpoint
/// (no cleartext, no MD5) costs nothing against it. (A server that asks
/// for cleartext or MD5 is the fake's to play: `tests/fake_server.rs`.)
#[test]
fn scram_only_connections_reach_a_password_hyperd() {
    let hyper = password_server();
    let weak = AuthMethods::CLEARTEXT | AuthMethods::MD5;
    for methods in [AuthMethods::SCRAM_SHA_256, AuthMethods::ALL.without(weak)] {
        let opts = ConnectOptions::new(hyper.endpoint().clone())
            .with_password(PASSWORD)
            .with_require_auth(methods);
        let mut c = Connection::connect_with(&opts).unwrap();
        assert_eq!(c.query_scalar::<i32>("SELECT 3").unwrap(), 3);
    }
}

/// hyperd started with `--no-password` lets everyone in without a word:
/// a connection that requires SCRAM-SHA-256 (which would prove that the
/// server knows the password) refuses that.
#[test]
fn scram_only_refuses_a_trusting_hyperd() {
    let opts = ConnectOptions::new(common::server().endpoint().clone())
        .with_password(PASSWORD)
        .with_require_auth(AuthMethods::SCRAM_SHA_256);
    let e = Connection::connect_with(&opts).unwrap_err();
    assert_eq!(e.refused_auth_method(), Some(AuthMethod::Trust), "{e}");
    assert_eq!(e.sqlstate(), "28000");
}

#[test]
fn empty_password_is_refused_before_starting() {
    let e = HyperProcess::new(HyperProcessOptions::default().with_password("")).unwrap_err();
    assert!(
        matches!(e, hyperdb_api::Error::InvalidArgument { .. }),
        "{e:?}"
    );
}

#[test]
fn options_debug_hides_passwords() {
    let o = HyperProcessOptions::default().with_password(PASSWORD);
    assert!(!format!("{o:?}").contains("s3cret"));
    let c = ConnectOptions::new(hyperdb_api::Endpoint::tcp("h", 1)).with_password(PASSWORD);
    assert!(!format!("{c:?}").contains("s3cret"));
}

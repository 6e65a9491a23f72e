//! Password authentication against a hyperd that requires one (SCRAM-SHA-256).

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, HyperProcess, HyperProcessOptions};

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

//! The client against a scripted fake server (`test_support/fake_hyperd.rs`)
//! for what a real hyperd never does: ask for a password in clear text or
//! as MD5. No hyperd needed; `tests/live/auth.rs` has the real server's
//! side of the same options.

#![allow(clippy::unwrap_used)]

#[path = "../test_support/fake_hyperd.rs"]
mod fake_hyperd;

use std::io::{self, Write};
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::thread::JoinHandle;

use bytes::BytesMut;
use hyperdb_api::{
    AsyncConnection, AuthMethod, AuthMethods, ConnectOptions, Connection, Endpoint, ErrorKind,
};

use fake_hyperd::{
    accept_login, complete_and_ready, message, read_message, read_startup, serve_requests,
};

const PASSWORD: &str = "hunter2-fake";

/// `AuthenticationCleartextPassword`.
const ASK_CLEARTEXT: &[u8] = &[0, 0, 0, 3];
/// `AuthenticationMD5Password` with a salt.
const ASK_MD5: &[u8] = &[0, 0, 0, 5, 1, 2, 3, 4];

/// What the fake server received in reply to its authentication request.
type Reply = io::Result<Option<(u8, Vec<u8>)>>;

/// Serves one connection on `listener`: asks for `request`, and returns
/// the client's reply (`None`: the client closed without one). A password
/// is accepted, and the session then served until the client ends it.
fn ask(listener: TcpListener, request: &'static [u8]) -> JoinHandle<Reply> {
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept()?;
        read_startup(&mut s)?;
        let mut out = BytesMut::new();
        message(&mut out, b'R', request);
        s.write_all(&out)?;
        let reply = read_message(&mut s)?;
        if let Some((b'p', _)) = reply {
            out.clear();
            accept_login(&mut out, (7, 8));
            s.write_all(&out)?;
            serve_requests(&mut s, |_, _, out| complete_and_ready(out, "SELECT 0"))?;
        }
        Ok(reply)
    })
}

fn bind(ip: IpAddr) -> (TcpListener, Endpoint) {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, Endpoint::tcp(ip.to_string(), port))
}

fn loopback() -> (TcpListener, Endpoint) {
    bind(IpAddr::from([127, 0, 0, 1]))
}

fn assert_refused(e: &hyperdb_api::Error, method: AuthMethod) {
    assert_eq!(e.kind(), Some(ErrorKind::Auth), "{e}");
    assert_eq!(e.refused_auth_method(), Some(method), "{e}");
    assert_eq!(e.sqlstate(), "28000", "{e}");
    assert!(!e.to_string().contains(PASSWORD), "{e}");
}

/// With cleartext and MD5 refused, a server asking for either gets no
/// reply at all: the connect fails with the refused method typed on the
/// error and the client hangs up.
#[test]
fn refused_cleartext_and_md5_requests_get_no_password() {
    let refuse = AuthMethods::ALL.without(AuthMethods::CLEARTEXT | AuthMethods::MD5);
    for (request, method) in [
        (ASK_CLEARTEXT, AuthMethod::Cleartext),
        (ASK_MD5, AuthMethod::Md5),
    ] {
        let (listener, endpoint) = loopback();
        let server = ask(listener, request);
        let options = ConnectOptions::new(endpoint)
            .with_password(PASSWORD)
            .with_require_auth(refuse);
        let e = Connection::connect_with(&options).unwrap_err();
        assert_refused(&e, method);
        let reply = server.join().unwrap().unwrap();
        assert_eq!(reply, None, "{method}: the client answered");
    }
}

#[tokio::test]
async fn refused_methods_get_no_password_from_async_connections_either() {
    let (listener, endpoint) = loopback();
    let server = ask(listener, ASK_MD5);
    let options = ConnectOptions::new(endpoint)
        .with_password(PASSWORD)
        .with_require_auth(AuthMethods::SCRAM_SHA_256);
    let e = AsyncConnection::connect_with(&options).await.unwrap_err();
    assert_refused(&e, AuthMethod::Md5);
    assert_eq!(server.join().unwrap().unwrap(), None);
}

/// A non-loopback address of this machine, if it has one (the address a
/// packet to the outside would leave from; nothing is sent).
fn outward_address() -> Option<IpAddr> {
    let probe = UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.1:9").ok()?;
    let ip = probe.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// By default a TCP endpoint off the loopback refuses cleartext and MD5:
/// there is no TLS on the way, so whoever asks would get the password.
#[test]
fn remote_endpoints_refuse_cleartext_and_md5_by_default() {
    let Some(ip) = outward_address() else {
        eprintln!("no non-loopback address on this machine; the default is unit-tested in core");
        return;
    };
    for (request, method) in [
        (ASK_CLEARTEXT, AuthMethod::Cleartext),
        (ASK_MD5, AuthMethod::Md5),
    ] {
        let (listener, endpoint) = bind(ip);
        assert!(!endpoint.is_local(), "{endpoint}");
        let server = ask(listener, request);
        let options = ConnectOptions::new(endpoint).with_password(PASSWORD);
        let e = Connection::connect_with(&options).unwrap_err();
        assert_refused(&e, method);
        assert_eq!(server.join().unwrap().unwrap(), None, "{method}");
    }
}

/// On the loopback the default answers every method (the bytes stay on
/// this machine), and `AuthMethods::ALL` does so anywhere.
#[test]
fn loopback_endpoints_answer_cleartext_by_default() {
    let (listener, endpoint) = loopback();
    let server = ask(listener, ASK_CLEARTEXT);
    let mut conn =
        Connection::connect_with(&ConnectOptions::new(endpoint).with_password(PASSWORD)).unwrap();
    conn.execute_command("SELECT 0").unwrap();
    conn.close().unwrap();
    let reply = server.join().unwrap().unwrap();
    assert_eq!(reply, Some((b'p', format!("{PASSWORD}\0").into_bytes())));
}

/// No `Debug` of a connection, its cancel handle or its options shows the
/// session's cancel secret or the password.
#[test]
fn debug_output_never_shows_the_cancel_secret_or_the_password() {
    const SECRET: i32 = 1_987_654_321;
    let (listener, endpoint) = loopback();
    let server = std::thread::spawn(move || {
        for _ in 0..2 {
            let (s, _) = listener.accept()?;
            fake_hyperd::serve_session_with_key(s, (4242, SECRET), |_, _, out| {
                complete_and_ready(out, "SELECT 0")
            })?;
        }
        io::Result::Ok(())
    });
    let options = ConnectOptions::new(endpoint).with_password(PASSWORD);
    let check = |what: &str, shown: String| {
        assert!(!shown.contains(&SECRET.to_string()), "{what}: {shown}");
        assert!(!shown.contains(PASSWORD), "{what}: {shown}");
    };
    check("options", format!("{options:?}"));
    let conn = Connection::connect_with(&options).unwrap();
    check("connection", format!("{conn:?}"));
    check("cancel handle", format!("{:?}", conn.cancel_handle()));
    assert!(
        format!("{conn:?}").contains("4242"),
        "the process id is shown"
    );
    conn.close().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let conn = AsyncConnection::connect_with(&options).await.unwrap();
        check("async connection", format!("{conn:?}"));
        check("async cancel handle", format!("{:?}", conn.cancel_handle()));
        conn.close().await.unwrap();
    });
    server.join().unwrap().unwrap();
}

#[test]
fn libpq_names_name_each_method() {
    let names = ["none", "password", "md5", "scram-sha-256"];
    let methods: Vec<_> = names
        .iter()
        .filter_map(|n| AuthMethod::from_libpq_name(n))
        .collect();
    assert_eq!(methods, AuthMethod::ALL);
    assert_eq!(AuthMethod::from_libpq_name("SCRAM"), None);
    assert_eq!(AuthMethod::from_libpq_name(""), None);
}

use super::*;
use crate::error::ErrorKind;

const NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
const SERVER_FIRST: &[u8] =
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
const CLIENT_FINAL: &[u8] = b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
    p=qvT2SWdEH5Q06albL+hjSYuUhCG7VndFyzIb7CK4n9k=";
const SERVER_FINAL: &[u8] = b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=";

fn scram_auth() -> Authenticator {
    let mut a = Authenticator::new("user", Some("pencil"));
    a.scram_nonce = Some(NONCE);
    a
}

fn mechs(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn err(r: Result<AuthResponse>) -> Error {
    match r {
        Ok(resp) => panic!("expected an error, got {resp:?}"),
        Err(e) => e,
    }
}

#[test]
fn trust() {
    let mut a = Authenticator::new("u", None);
    assert_eq!(a.step(AuthRequest::Ok).expect("ok"), AuthResponse::None);
    assert!(a.is_done());
}

#[test]
fn cleartext() {
    let mut a = Authenticator::new("u", Some("pw"));
    assert_eq!(
        a.step(AuthRequest::Cleartext).expect("ok"),
        AuthResponse::Password(b"pw\0".to_vec())
    );
    assert!(!a.is_done());
    a.step(AuthRequest::Ok).expect("ok");
    assert!(a.is_done());
}

#[test]
fn cleartext_with_nul_rejected() {
    let mut a = Authenticator::new("u", Some("p\0w"));
    assert_eq!(
        err(a.step(AuthRequest::Cleartext)).kind(),
        ErrorKind::InvalidInput
    );
}

#[test]
fn md5() {
    let mut a = Authenticator::new("user", Some("pencil"));
    let r = a.step(AuthRequest::Md5 { salt: [1, 2, 3, 4] }).expect("ok");
    assert_eq!(
        r,
        AuthResponse::Password(b"md54376eb6913b38f9aaff38dc7cf19ca76\0".to_vec())
    );
    a.step(AuthRequest::Ok).expect("ok");
    assert!(a.is_done());
}

#[test]
fn scram_full_exchange() {
    let mut a = scram_auth();
    let offered = mechs(&["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]);
    let r = a
        .step(AuthRequest::Sasl {
            mechanisms: &offered,
        })
        .expect("ok");
    assert_eq!(
        r,
        AuthResponse::SaslInitial {
            mechanism: "SCRAM-SHA-256",
            data: b"n,,n=,r=rOprNGfwEbeRWgbNEkqO".to_vec()
        }
    );
    let r = a.step(AuthRequest::SaslContinue(SERVER_FIRST)).expect("ok");
    assert_eq!(r, AuthResponse::Sasl(CLIENT_FINAL.to_vec()));
    let r = a.step(AuthRequest::SaslFinal(SERVER_FINAL)).expect("ok");
    assert_eq!(r, AuthResponse::None);
    assert!(!a.is_done());
    a.step(AuthRequest::Ok).expect("ok");
    assert!(a.is_done());
}

#[test]
fn scram_with_random_nonce() {
    let mut a = Authenticator::new("u", Some("pw"));
    let offered = mechs(&["SCRAM-SHA-256"]);
    match a
        .step(AuthRequest::Sasl {
            mechanisms: &offered,
        })
        .expect("ok")
    {
        AuthResponse::SaslInitial { mechanism, data } => {
            assert_eq!(mechanism, "SCRAM-SHA-256");
            assert!(data.starts_with(b"n,,n=,r="));
            assert!(data.len() >= 8 + 24);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn ok_before_server_final_is_refused() {
    let offered = mechs(&["SCRAM-SHA-256"]);
    // Right after SASLInitialResponse.
    let mut a = scram_auth();
    a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    })
    .expect("ok");
    assert_eq!(err(a.step(AuthRequest::Ok)).kind(), ErrorKind::Auth);
    assert!(!a.is_done());
    // After the client proof, before the server's.
    let mut a = scram_auth();
    a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    })
    .expect("ok");
    a.step(AuthRequest::SaslContinue(SERVER_FIRST)).expect("ok");
    assert_eq!(err(a.step(AuthRequest::Ok)).kind(), ErrorKind::Auth);
    assert!(!a.is_done());
    // And it stays failed.
    assert_eq!(err(a.step(AuthRequest::Ok)).kind(), ErrorKind::Auth);
}

#[test]
fn scram_bad_server_signature() {
    let offered = mechs(&["SCRAM-SHA-256"]);
    let mut a = scram_auth();
    a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    })
    .expect("ok");
    a.step(AuthRequest::SaslContinue(SERVER_FIRST)).expect("ok");
    let r = a.step(AuthRequest::SaslFinal(
        b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
    ));
    assert_eq!(err(r).kind(), ErrorKind::Auth);
    assert_eq!(err(a.step(AuthRequest::Ok)).kind(), ErrorKind::Auth);
    assert!(!a.is_done());
}

#[test]
fn scram_final_before_continue() {
    let offered = mechs(&["SCRAM-SHA-256"]);
    let mut a = scram_auth();
    a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    })
    .expect("ok");
    let r = a.step(AuthRequest::SaslFinal(SERVER_FINAL));
    assert_eq!(err(r).kind(), ErrorKind::Auth);
}

#[test]
fn sasl_without_scram() {
    let offered = mechs(&["SCRAM-SHA-256-PLUS", "OAUTHBEARER"]);
    let mut a = Authenticator::new("u", Some("pw"));
    let e = err(a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    }));
    assert_eq!(e.kind(), ErrorKind::Auth);
    let msg = e.to_string();
    assert!(msg.contains("SCRAM-SHA-256-PLUS, OAUTHBEARER"), "{msg}");
}

#[test]
fn no_password_configured() {
    let offered = mechs(&["SCRAM-SHA-256"]);
    for req in [
        AuthRequest::Cleartext,
        AuthRequest::Md5 { salt: [0; 4] },
        AuthRequest::Sasl {
            mechanisms: &offered,
        },
    ] {
        let mut a = Authenticator::new("u", None);
        let e = err(a.step(req));
        assert_eq!(e.kind(), ErrorKind::Auth);
        assert!(e.to_string().contains("server requires a password"), "{e}");
    }
}

#[test]
fn unsupported_methods_named() {
    for (code, name) in [
        (2, "KerberosV5"),
        (7, "GSSAPI"),
        (9, "SSPI"),
        (42, "unknown"),
    ] {
        let mut a = Authenticator::new("u", Some("pw"));
        let msg = err(a.step(AuthRequest::Other(code))).to_string();
        assert!(
            msg.contains(name) && msg.contains(&code.to_string()),
            "{msg}"
        );
    }
}

#[test]
fn requests_after_done_rejected() {
    let mut a = Authenticator::new("u", Some("pw"));
    a.step(AuthRequest::Ok).expect("ok");
    assert!(a.is_done());
    assert_eq!(err(a.step(AuthRequest::Ok)).kind(), ErrorKind::Protocol);
    let mut a = Authenticator::new("u", Some("pw"));
    a.step(AuthRequest::Ok).expect("ok");
    assert_eq!(
        err(a.step(AuthRequest::Cleartext)).kind(),
        ErrorKind::Protocol
    );
}

#[test]
fn out_of_order_requests() {
    let mut a = Authenticator::new("u", Some("pw"));
    assert_eq!(
        err(a.step(AuthRequest::SaslContinue(SERVER_FIRST))).kind(),
        ErrorKind::Protocol
    );
    // A second password request after one was sent.
    let mut a = Authenticator::new("u", Some("pw"));
    a.step(AuthRequest::Cleartext).expect("ok");
    assert_eq!(
        err(a.step(AuthRequest::Cleartext)).kind(),
        ErrorKind::Protocol
    );
    // SASL restarted mid-exchange.
    let offered = mechs(&["SCRAM-SHA-256"]);
    let mut a = scram_auth();
    a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    })
    .expect("ok");
    assert_eq!(
        err(a.step(AuthRequest::Sasl {
            mechanisms: &offered
        }))
        .kind(),
        ErrorKind::Protocol
    );
}

/// A method outside the allowed set fails before anything is sent,
/// with the refused method typed on the error, and ends the exchange.
#[test]
fn refused_methods_fail_before_any_reply() {
    let offered = mechs(&["SCRAM-SHA-256"]);
    let no_weak = AuthMethods::ALL.without(AuthMethods::CLEARTEXT | AuthMethods::MD5);
    for (allowed, req, method) in [
        (no_weak, AuthRequest::Cleartext, AuthMethod::Cleartext),
        (no_weak, AuthRequest::Md5 { salt: [1; 4] }, AuthMethod::Md5),
        (
            AuthMethods::SCRAM_SHA_256,
            AuthRequest::Ok,
            AuthMethod::Trust,
        ),
        (
            AuthMethods::CLEARTEXT,
            AuthRequest::Sasl {
                mechanisms: &offered,
            },
            AuthMethod::ScramSha256,
        ),
        (AuthMethods::NONE, AuthRequest::Ok, AuthMethod::Trust),
    ] {
        let mut a = Authenticator::new("u", Some("hunter2")).with_allowed(allowed);
        let e = err(a.step(req));
        assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
        assert_eq!(e.refused_auth_method(), Some(method), "{e}");
        assert!(e.to_string().contains("refuses"), "{e}");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert_eq!(err(a.step(AuthRequest::Ok)).kind(), ErrorKind::Auth);
        assert!(!a.is_done());
    }
    // Errors of other kinds carry no refused method.
    let mut a = Authenticator::new("u", None);
    assert_eq!(
        err(a.step(AuthRequest::Cleartext)).refused_auth_method(),
        None
    );
}

/// Allowed methods run as before; the set is checked only against the
/// method the server picks, not the later steps of its exchange.
#[test]
fn allowed_methods_run_unchanged() {
    let mut a = Authenticator::new("u", None).with_allowed(AuthMethods::TRUST);
    a.step(AuthRequest::Ok).expect("trust");
    assert!(a.is_done());
    let mut a = Authenticator::new("user", Some("pencil")).with_allowed(AuthMethods::MD5);
    a.step(AuthRequest::Md5 { salt: [1, 2, 3, 4] })
        .expect("md5");
    a.step(AuthRequest::Ok).expect("ok");
    assert!(a.is_done());
    let offered = mechs(&["SCRAM-SHA-256"]);
    let mut a = scram_auth().with_allowed(AuthMethods::SCRAM_SHA_256);
    a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    })
    .expect("ok");
    a.step(AuthRequest::SaslContinue(SERVER_FIRST)).expect("ok");
    a.step(AuthRequest::SaslFinal(SERVER_FINAL)).expect("ok");
    a.step(AuthRequest::Ok).expect("ok");
    assert!(a.is_done());
}

#[test]
fn auth_method_sets() {
    let set = AuthMethods::SCRAM_SHA_256 | AuthMethods::TRUST;
    assert!(set.contains(AuthMethod::Trust) && set.contains(AuthMethod::ScramSha256));
    assert!(!set.contains(AuthMethod::Md5) && !set.contains(AuthMethod::Cleartext));
    assert_eq!(set.without(AuthMethods::TRUST), AuthMethods::SCRAM_SHA_256);
    assert_eq!(AuthMethods::from(AuthMethod::Md5), AuthMethods::MD5);
    assert_eq!(format!("{set:?}"), "{Trust, ScramSha256}");
    assert_eq!(format!("{:?}", AuthMethods::NONE), "{}");
    for m in AuthMethod::ALL {
        assert!(AuthMethods::ALL.contains(m) && !AuthMethods::NONE.contains(m));
    }
}

#[test]
fn debug_redacts_password() {
    let mut a = Authenticator::new("alice", Some("hunter2-secret"));
    let dbg = format!("{a:?}");
    assert!(!dbg.contains("hunter2"), "{dbg}");
    assert!(dbg.contains("alice") && dbg.contains("redacted"), "{dbg}");

    let r = a.step(AuthRequest::Cleartext).expect("ok");
    let dbg = format!("{r:?} {a:?}");
    assert!(!dbg.contains("hunter2"), "{dbg}");

    let offered = mechs(&["SCRAM-SHA-256"]);
    let mut a = Authenticator::new("alice", Some("hunter2-secret"));
    a.step(AuthRequest::Sasl {
        mechanisms: &offered,
    })
    .expect("ok");
    let dbg = format!("{a:?}");
    assert!(!dbg.contains("hunter2"), "{dbg}");
}

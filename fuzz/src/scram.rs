//! SCRAM-SHA-256 and the authentication state machine against whatever a
//! server says: the server-first and server-final messages as arbitrary
//! bytes; a well-formed exchange built from the input and checked
//! against an independent computation of RFC 5802 (the proof the client
//! sends, and which server signatures it must accept); and arbitrary
//! sequences of authentication requests.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use hyperdb_api_core::error::ErrorKind;
use hyperdb_api_core::protocol::auth::{
    AuthMethods, AuthRequest, AuthResponse, Authenticator, ScramSha256,
};
use sha2::{Digest, Sha256};

use crate::alloc::{assert_bounded, peak_during};
use crate::Input;

const PASSWORD: &str = "fuzz-password";
const CLIENT_NONCE: &str = "fuzzclientnonce";
/// Iteration counts above this are skipped: each costs a hash per
/// iteration, up to the client's cap of 100,000 (which unit tests cover),
/// and a slow input starves the fuzzer.
const MAX_FUZZ_ITERATIONS: u32 = 4096;

pub fn check(data: &[u8]) {
    let (_, peak) = peak_during(|| {
        let mut input = Input::new(data);
        match input.byte() % 3 {
            0 => raw(input),
            1 => built(input),
            _ => requests(input),
        }
    });
    assert_bounded("SCRAM", peak, data.len());
}

fn scram() -> ScramSha256 {
    ScramSha256::with_nonce(PASSWORD, CLIENT_NONCE).expect("a valid nonce")
}

fn assert_auth_or_protocol(e: &hyperdb_api_core::Error) {
    assert!(
        matches!(e.kind(), ErrorKind::Auth | ErrorKind::Protocol),
        "untyped error: {e:?}"
    );
}

/// Arbitrary server messages: errors are typed, and whatever the client
/// answers is a well-formed client-final message carrying the proof for
/// what the server sent.
fn raw(mut input: Input<'_>) {
    let first = input.short();
    let last = input.rest();
    if iterations_in(first).is_some_and(|i| i > MAX_FUZZ_ITERATIONS && i <= 100_000) {
        return;
    }
    let mut s = scram();
    let reply = match s.handle_server_first(first) {
        Ok(reply) => reply,
        Err(e) => {
            assert_auth_or_protocol(&e);
            assert!(
                s.verify_server_final(last).is_err(),
                "went on after a failure"
            );
            return;
        }
    };
    let server_first = std::str::from_utf8(first).expect("accepted, so UTF-8");
    let (nonce, salt, iterations) = parse_first(server_first);
    let expected = Oracle::new(&salt, iterations, server_first, nonce);
    assert_eq!(reply, expected.client_final().into_bytes());
    let outcome = s.verify_server_final(last);
    let valid = std::str::from_utf8(last).ok().is_some_and(|t| {
        t.split(',').next() == Some(&format!("v={}", BASE64.encode(expected.server_signature)))
    });
    match outcome {
        Ok(()) => {
            assert!(valid, "accepted a wrong server signature: {last:?}");
            assert!(s.is_done());
        }
        Err(e) => {
            assert!(!valid, "refused the right server signature: {e}");
            assert_auth_or_protocol(&e);
        }
    }
}

/// A well-formed exchange: the client accepts exactly the right
/// signature, however the server final message is spoiled.
fn built(mut input: Input<'_>) {
    let suffix: String = input
        .short()
        .iter()
        .map(|&b| char::from(0x21 + b % 94))
        .filter(|&c| c != ',')
        .collect();
    let salt = input.short().to_vec();
    let iterations = u32::from(input.u16()) % MAX_FUZZ_ITERATIONS + 1;
    let extension = input.short();
    let spoil = input.byte();
    let nonce = format!("{CLIENT_NONCE}{suffix}");
    let mut server_first = format!("r={nonce},s={},i={iterations}", BASE64.encode(&salt));
    if spoil & 0x80 != 0 {
        server_first.push(',');
        server_first.push_str(&String::from_utf8_lossy(extension));
    }
    let mut s = scram();
    let reply = s.handle_server_first(server_first.as_bytes());
    if suffix.is_empty() || salt.is_empty() {
        let e = reply.expect_err("an empty server nonce suffix or salt was accepted");
        assert_auth_or_protocol(&e);
        return;
    }
    let expected = Oracle::new(&salt, iterations, &server_first, &nonce);
    assert_eq!(
        reply.expect("a well-formed server-first"),
        expected.client_final().into_bytes()
    );
    let signature = BASE64.encode(expected.server_signature);
    let (last, valid) = match spoil % 8 {
        0 => (format!("v={signature}"), true),
        1 => (
            format!("v={signature},{}", String::from_utf8_lossy(extension)),
            true,
        ),
        2 => {
            let mut wrong = expected.server_signature;
            wrong[usize::from(spoil >> 3) % 32] ^= 1 << (spoil % 8);
            (format!("v={}", BASE64.encode(wrong)), false)
        }
        3 => (format!("v={}", &signature[..signature.len() - 4]), false),
        4 => (format!("e={}", String::from_utf8_lossy(extension)), false),
        5 => (format!("v={signature}="), false),
        6 => (String::from_utf8_lossy(extension).into_owned(), false),
        _ => (format!("V={signature}"), false),
    };
    match s.verify_server_final(last.as_bytes()) {
        Ok(()) => assert!(valid, "accepted {last:?}"),
        Err(e) => {
            assert!(!valid, "refused {last:?}: {e}");
            assert_auth_or_protocol(&e);
        }
    }
}

/// Authentication requests in any order, for any set of allowed methods:
/// errors are typed and final, nothing is answered to a refused method,
/// and the exchange is done only after `AuthenticationOk`.
fn requests(mut input: Input<'_>) {
    let allowed = [
        AuthMethods::ALL,
        AuthMethods::SCRAM_SHA_256,
        AuthMethods::SCRAM_SHA_256 | AuthMethods::TRUST,
        AuthMethods::NONE,
    ][usize::from(input.byte() % 4)];
    let password = (input.byte() & 1 == 0).then_some(PASSWORD);
    let mut auth = Authenticator::new("fuzz", password).with_allowed(allowed);
    let mut failed = false;
    let mechanisms = ["SCRAM-SHA-256".to_owned(), "OTHER".to_owned()];
    while !input.is_empty() {
        let kind = input.byte();
        let data = input.short();
        if iterations_in(data).is_some_and(|i| i > MAX_FUZZ_ITERATIONS && i <= 100_000) {
            return;
        }
        let salt = [data.first().copied().unwrap_or(0); 4];
        let req = match kind % 8 {
            0 => AuthRequest::Ok,
            1 => AuthRequest::Cleartext,
            2 => AuthRequest::Md5 { salt },
            3 => AuthRequest::Sasl {
                mechanisms: &mechanisms[..usize::from(kind >> 3) % 3],
            },
            4 => AuthRequest::SaslContinue(data),
            5 => AuthRequest::SaslFinal(data),
            _ => AuthRequest::Other(u32::from(kind)),
        };
        let was_done = auth.is_done();
        let step = auth.step(req);
        assert!(
            !format!("{auth:?}").contains(PASSWORD),
            "Debug shows the password"
        );
        match step {
            Ok(response) => {
                assert!(!failed, "a step succeeded after a failure: {req:?}");
                assert!(!format!("{response:?}").contains(PASSWORD));
                if let AuthResponse::Password(_) = response {
                    assert!(password.is_some());
                }
                if auth.is_done() {
                    assert!(matches!(req, AuthRequest::Ok) || was_done, "{req:?}");
                }
            }
            Err(e) => {
                failed = true;
                assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::Auth | ErrorKind::Protocol | ErrorKind::InvalidInput
                    ),
                    "untyped error: {e:?}"
                );
            }
        }
    }
}

/// The `i=` attribute's value, when the message has one.
fn iterations_in(msg: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(msg).ok()?;
    text.split(',')
        .filter_map(|a| a.strip_prefix("i="))
        .find_map(|i| i.parse().ok())
}

/// Nonce, salt and iteration count of a server-first message the client
/// accepted.
fn parse_first(msg: &str) -> (&str, Vec<u8>, u32) {
    let mut attrs = msg.split(',');
    let mut next = |name: &str| {
        attrs
            .next()
            .and_then(|a| a.strip_prefix(name))
            .expect("an accepted attribute")
    };
    let nonce = next("r=");
    let salt = BASE64.decode(next("s=")).expect("accepted base64");
    let iterations = next("i=").parse().expect("accepted digits");
    (nonce, salt, iterations)
}

/// The signature a server knowing [`PASSWORD`] sends for this exchange.
pub(crate) fn server_signature(
    salt: &[u8],
    iterations: u32,
    server_first: &str,
    nonce: &str,
) -> [u8; 32] {
    Oracle::new(salt, iterations, server_first, nonce).server_signature
}

/// RFC 5802's computation, written out here independently of the client.
struct Oracle {
    nonce: String,
    proof: [u8; 32],
    server_signature: [u8; 32],
}

impl Oracle {
    fn new(salt: &[u8], iterations: u32, server_first: &str, nonce: &str) -> Oracle {
        let salted = pbkdf2(PASSWORD.as_bytes(), salt, iterations);
        let client_key = mac(&salted, b"Client Key");
        let stored_key = Sha256::digest(client_key);
        let auth_message = format!("n=,r={CLIENT_NONCE},{server_first},c=biws,r={nonce}");
        let client_signature = mac(&stored_key, auth_message.as_bytes());
        let mut proof = client_key;
        for (p, s) in proof.iter_mut().zip(client_signature) {
            *p ^= s;
        }
        let server_key = mac(&salted, b"Server Key");
        Oracle {
            nonce: nonce.to_owned(),
            proof,
            server_signature: mac(&server_key, auth_message.as_bytes()),
        }
    }

    fn client_final(&self) -> String {
        format!("c=biws,r={},p={}", self.nonce, BASE64.encode(self.proof))
    }
}

fn mac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    m.update(data);
    m.finalize().into_bytes().into()
}

fn pbkdf2(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut u = mac(password, &[salt, &1u32.to_be_bytes()].concat());
    let mut out = u;
    for _ in 1..iterations {
        u = mac(password, &u);
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

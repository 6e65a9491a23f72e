//! SCRAM-SHA-256 client ([RFC 5802], [RFC 7677]) as PostgreSQL uses it.
//!
//! No channel binding: the GS2 header is always `n,,` (the client does not
//! support it), so only the `SCRAM-SHA-256` mechanism is offered, never
//! `SCRAM-SHA-256-PLUS`.
//!
//! The user name in the client-first message is empty: PostgreSQL takes the
//! user from the startup message and ignores `n=`.
//!
//! # Password preparation
//!
//! The password is prepared with SASLprep as `hyperd` does it (module
//! `auth::saslprep`): ASCII passwords are used verbatim; in
//! others, non-ASCII spaces become SPACE and invisible characters such as the
//! soft hyphen are dropped, unless the result is not SASLprep-able (then the
//! raw bytes are used, as PostgreSQL does). No NFKC normalization is applied,
//! matching `hyperd` but not PostgreSQL proper.
//!
//! [RFC 5802]: https://www.rfc-editor.org/rfc/rfc5802
//! [RFC 7677]: https://www.rfc-editor.org/rfc/rfc7677

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::saslprep;
use crate::error::{Error, Result};

/// The SASL mechanism name this client implements.
pub const MECHANISM: &str = "SCRAM-SHA-256";

/// Highest iteration count accepted from a server.
///
/// PostgreSQL's default is 4096. A hostile or compromised server could ask for
/// billions of iterations to burn the client's CPU, so larger counts are
/// refused.
pub const MAX_ITERATIONS: u32 = 100_000;

/// Random bytes in a client nonce (base64-encoded to 24 characters).
const NONCE_BYTES: usize = 18;

/// GS2 header: no channel binding, no authorization identity.
const GS2_HEADER: &str = "n,,";

/// `c=` attribute of the client-final message: base64 of [`GS2_HEADER`].
const CHANNEL_BINDING: &str = "biws";

type HmacSha256 = Hmac<Sha256>;

/// Where the exchange stands.
enum State {
    /// Waiting for the server-first message.
    Initial,
    /// Client-final sent; waiting for the server-final message.
    ClientFinalSent { server_signature: [u8; 32] },
    /// The server proved it knows the password.
    Done,
    /// A step failed; the exchange cannot continue.
    Failed,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Initial => "awaiting server-first-message",
            State::ClientFinalSent { .. } => "awaiting server-final-message",
            State::Done => "done",
            State::Failed => "failed",
        }
    }
}

/// One SCRAM-SHA-256 exchange, client side, as a strict state machine:
///
/// 1. [`client_first_message`](Self::client_first_message): send it in
///    `SASLInitialResponse`;
/// 2. [`handle_server_first`](Self::handle_server_first) with the
///    `AuthenticationSASLContinue` data; send the result in `SASLResponse`;
/// 3. [`verify_server_final`](Self::verify_server_final) with the
///    `AuthenticationSASLFinal` data.
///
/// Calling a step out of order, or after a failed step, is an error. The
/// password is dropped once the keys are derived. `Debug` never prints it.
pub struct ScramSha256 {
    /// The SASLprep-ed password bytes; emptied after [`handle_server_first`](Self::handle_server_first).
    password: Vec<u8>,
    /// The user name, already escaped for the `n=` attribute (empty for PostgreSQL).
    username: String,
    client_nonce: String,
    state: State,
}

impl fmt::Debug for ScramSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramSha256")
            .field("password", &"<redacted>")
            .field("client_nonce", &self.client_nonce)
            .field("state", &self.state.name())
            .finish()
    }
}

impl ScramSha256 {
    /// Starts an exchange with a fresh random nonce.
    ///
    /// Fails only when the operating system cannot supply random bytes.
    pub fn new(password: &str) -> Result<ScramSha256> {
        let mut raw = [0u8; NONCE_BYTES];
        getrandom::getrandom(&mut raw)
            .map_err(|e| Error::auth(format!("cannot generate a SCRAM nonce: {e}")))?;
        ScramSha256::with_nonce(password, &BASE64.encode(raw))
    }

    /// Starts an exchange with a caller-chosen nonce; for tests.
    ///
    /// The nonce must be non-empty printable ASCII without `,`.
    pub fn with_nonce(password: &str, nonce: &str) -> Result<ScramSha256> {
        if !is_valid_nonce(nonce) {
            return Err(Error::invalid_input(
                "SCRAM nonce must be non-empty printable ASCII without ','",
            ));
        }
        Ok(ScramSha256 {
            password: saslprep::prepare(password).into_owned(),
            username: String::new(),
            client_nonce: nonce.to_owned(),
            state: State::Initial,
        })
    }

    /// Sets the `n=` user name (escaped as RFC 5802 requires). PostgreSQL
    /// ignores it, so the client sends it empty; tests use it to replay the
    /// RFC 7677 example.
    #[cfg(test)]
    fn with_username(mut self, user: &str) -> ScramSha256 {
        self.username = user.replace('=', "=3D").replace(',', "=2C");
        self
    }

    /// `client-first-bare`: `n=<user>,r=<nonce>`.
    fn client_first_bare(&self) -> String {
        format!("n={},r={}", self.username, self.client_nonce)
    }

    /// The client-first message: `n,,n=,r=<nonce>`.
    pub fn client_first_message(&self) -> Vec<u8> {
        format!("{GS2_HEADER}{}", self.client_first_bare()).into_bytes()
    }

    /// Processes the server-first message and returns the client-final
    /// message (`c=biws,r=<nonce>,p=<proof>`).
    ///
    /// Errors: called out of order or after a failure ([`Error::auth`]);
    /// server nonce not extending ours, iteration count above
    /// [`MAX_ITERATIONS`], or a mandatory extension (`m=`) ([`Error::auth`]);
    /// malformed message ([`Error::protocol`]). Any error ends the exchange.
    pub fn handle_server_first(&mut self, msg: &[u8]) -> Result<Vec<u8>> {
        match std::mem::replace(&mut self.state, State::Failed) {
            State::Initial => {}
            other => return Err(out_of_order("server-first-message", &other)),
        }
        let server_first = std::str::from_utf8(msg)
            .map_err(|_| Error::protocol("SCRAM server-first-message is not valid UTF-8"))?;
        let parsed = parse_server_first(server_first)?;

        if !parsed.nonce.starts_with(&self.client_nonce)
            || parsed.nonce.len() == self.client_nonce.len()
        {
            return Err(Error::auth(
                "SCRAM server nonce does not extend the client nonce",
            ));
        }
        if parsed.iterations > MAX_ITERATIONS {
            return Err(Error::auth(format!(
                "SCRAM iteration count {} requested by the server exceeds the limit of {MAX_ITERATIONS}",
                parsed.iterations
            )));
        }

        let salted_password = hi(&self.password, &parsed.salt, parsed.iterations);
        // The password is no longer needed (best effort: the allocator may
        // keep copies made before this point).
        self.password.fill(0);
        self.password = Vec::new();

        let client_key = hmac(&salted_password, b"Client Key");
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        let client_final_without_proof = format!("c={CHANNEL_BINDING},r={}", parsed.nonce);
        let auth_message = format!(
            "{},{server_first},{client_final_without_proof}",
            self.client_first_bare()
        );
        let client_signature = hmac(&stored_key, auth_message.as_bytes());
        let mut proof = client_key;
        for (p, s) in proof.iter_mut().zip(client_signature) {
            *p ^= s;
        }
        let server_key = hmac(&salted_password, b"Server Key");
        let server_signature = hmac(&server_key, auth_message.as_bytes());

        self.state = State::ClientFinalSent { server_signature };
        Ok(format!("{client_final_without_proof},p={}", BASE64.encode(proof)).into_bytes())
    }

    /// Checks the server-final message: the server must prove it knows the
    /// password (`v=<signature>`, compared in constant time).
    ///
    /// Errors: called out of order ([`Error::auth`]); the server reported an
    /// error (`e=...`) or sent a wrong signature ([`Error::auth`]); malformed
    /// message ([`Error::protocol`]).
    pub fn verify_server_final(&mut self, msg: &[u8]) -> Result<()> {
        let expected = match std::mem::replace(&mut self.state, State::Failed) {
            State::ClientFinalSent { server_signature } => server_signature,
            other => return Err(out_of_order("server-final-message", &other)),
        };
        let text = std::str::from_utf8(msg)
            .map_err(|_| Error::protocol("SCRAM server-final-message is not valid UTF-8"))?;
        // Extensions may follow the first attribute; they are ignored.
        let first = text.split(',').next().unwrap_or_default();
        if let Some(err) = first.strip_prefix("e=") {
            return Err(Error::auth(format!(
                "server rejected SCRAM authentication: {err}"
            )));
        }
        let Some(verifier) = first.strip_prefix("v=") else {
            return Err(Error::protocol(
                "SCRAM server-final-message has neither 'v=' nor 'e='",
            ));
        };
        let signature = BASE64
            .decode(verifier)
            .map_err(|_| Error::protocol("SCRAM server signature ('v=') is not valid base64"))?;
        // Slices of different lengths compare unequal.
        if !bool::from(signature.as_slice().ct_eq(&expected)) {
            return Err(Error::auth(
                "SCRAM server signature is wrong: the server does not know the password",
            ));
        }
        self.state = State::Done;
        Ok(())
    }

    /// The server's signature was verified.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }
}

fn out_of_order(received: &str, state: &State) -> Error {
    Error::auth(format!(
        "SCRAM {received} out of order: the exchange is {}",
        state.name()
    ))
}

/// RFC 5802 `printable`, the alphabet of nonces: `%x21-2B / %x2D-7E`.
fn is_valid_nonce(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce
            .bytes()
            .all(|b| matches!(b, 0x21..=0x2B | 0x2D..=0x7E))
}

struct ServerFirst<'a> {
    nonce: &'a str,
    salt: Vec<u8>,
    iterations: u32,
}

/// `server-first-message = [reserved-mext ","] nonce "," salt "," iteration-count ["," extensions]`
fn parse_server_first(msg: &str) -> Result<ServerFirst<'_>> {
    if msg.starts_with("m=") {
        return Err(Error::auth(
            "server requires an unsupported SCRAM extension ('m=')",
        ));
    }
    let mut attrs = msg.split(',');
    let mut attr = |name: &str| -> Result<&str> {
        attrs
            .next()
            .and_then(|a| a.strip_prefix(name))
            .and_then(|a| a.strip_prefix('='))
            .ok_or_else(|| {
                Error::protocol(format!(
                    "SCRAM server-first-message lacks the '{name}=' attribute"
                ))
            })
    };
    let nonce = attr("r")?;
    let salt = attr("s")?;
    let iterations = attr("i")?;
    // Any further attributes are optional extensions; ignore them.

    if !is_valid_nonce(nonce) {
        return Err(Error::protocol(
            "SCRAM server nonce is empty or not printable",
        ));
    }
    let salt = BASE64
        .decode(salt)
        .map_err(|_| Error::protocol("SCRAM salt is not valid base64"))?;
    if salt.is_empty() {
        return Err(Error::protocol("SCRAM salt is empty"));
    }
    // Digits only: u32::from_str would also accept a leading '+'.
    let iterations = if !iterations.is_empty() && iterations.bytes().all(|b| b.is_ascii_digit()) {
        // Overflowing counts are certainly above the cap.
        iterations.parse::<u32>().unwrap_or(u32::MAX)
    } else {
        return Err(Error::protocol(format!(
            "SCRAM iteration count {iterations:?} is not a number"
        )));
    };
    if iterations == 0 {
        return Err(Error::protocol("SCRAM iteration count is 0"));
    }
    Ok(ServerFirst {
        nonce,
        salt,
        iterations,
    })
}

/// HMAC-SHA-256.
fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = new_hmac(key);
    mac.update(data);
    mac.finalize().into_bytes().into()
}

fn new_hmac(key: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length; `new_from_slice` cannot fail.
    HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length")
}

/// `Hi(password, salt, i)` of RFC 5802: PBKDF2-HMAC-SHA-256 with one output
/// block.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    // Key the HMAC once and clone it per round.
    let prf = new_hmac(password);
    let mut mac = prf.clone();
    mac.update(salt);
    mac.update(&1u32.to_be_bytes());
    let mut u: [u8; 32] = mac.finalize().into_bytes().into();
    let mut out = u;
    for _ in 1..iterations {
        let mut mac = prf.clone();
        mac.update(&u);
        u = mac.finalize().into_bytes().into();
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    const CLIENT_NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
    const SERVER_FIRST: &str =
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";

    fn scram() -> ScramSha256 {
        ScramSha256::with_nonce("pencil", CLIENT_NONCE).expect("valid nonce")
    }

    fn kind(r: Result<impl Sized>) -> ErrorKind {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.kind(),
        }
    }

    fn message(r: Result<impl Sized>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn rfc7677_example() {
        // RFC 7677 section 3, user "user", password "pencil".
        let mut s = scram().with_username("user");
        assert_eq!(
            s.client_first_message(),
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO".to_vec()
        );
        let client_final = s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        assert_eq!(
            String::from_utf8(client_final).expect("utf8"),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert!(!s.is_done());
        s.verify_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .expect("server signature verifies");
        assert!(s.is_done());
    }

    #[test]
    fn empty_user_as_postgres_sends_it() {
        // Vector computed independently (Python hashlib/hmac) for `n=`.
        let mut s = scram();
        assert_eq!(
            s.client_first_message(),
            b"n,,n=,r=rOprNGfwEbeRWgbNEkqO".to_vec()
        );
        let client_final = s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        assert_eq!(
            String::from_utf8(client_final).expect("utf8"),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=qvT2SWdEH5Q06albL+hjSYuUhCG7VndFyzIb7CK4n9k="
        );
        s.verify_server_final(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=")
            .expect("server signature verifies");
        assert!(s.is_done());
    }

    #[test]
    fn non_ascii_password_used_as_utf8_bytes() {
        // Python: hashlib.pbkdf2_hmac over "pässwörd".encode() (NFC), i=1.
        let mut s = ScramSha256::with_nonce("pässwörd", CLIENT_NONCE).expect("nonce");
        let client_final = s
            .handle_server_first(b"r=rOprNGfwEbeRWgbNEkqOsrv,s=QSXCR+Q6sek8bf92,i=1")
            .expect("ok");
        assert_eq!(
            client_final,
            b"c=biws,r=rOprNGfwEbeRWgbNEkqOsrv,p=fpqSjPfDfN14kKYpEMXoyUm48vltBxnS1uDZMpKvMYE="
                .to_vec()
        );
        s.verify_server_final(b"v=2HifCgplG0QAYm8zpNbitaASZcReZ81XoitIb8Riar4=")
            .expect("verifies");
    }

    #[test]
    fn random_nonce_is_printable_and_fresh() {
        let a = ScramSha256::new("pw").expect("nonce");
        let b = ScramSha256::new("pw").expect("nonce");
        assert!(is_valid_nonce(&a.client_nonce));
        assert!(a.client_nonce.len() >= 24);
        assert_ne!(a.client_nonce, b.client_nonce);
        let first = String::from_utf8(a.client_first_message()).expect("utf8");
        assert_eq!(first, format!("n,,n=,r={}", a.client_nonce));
    }

    #[test]
    fn invalid_test_nonce_rejected() {
        assert_eq!(
            kind(ScramSha256::with_nonce("pw", "")),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            kind(ScramSha256::with_nonce("pw", "a,b")),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            kind(ScramSha256::with_nonce("pw", "a b")),
            ErrorKind::InvalidInput
        );
    }

    #[test]
    fn server_nonce_must_extend_client_nonce() {
        let mut s = scram();
        let r =
            s.handle_server_first(b"r=XXXXNGfwEbeRWgbNEkqO%hvYD,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
        assert_eq!(kind(r), ErrorKind::Auth);
        // The exchange is dead after a failure.
        assert_eq!(
            kind(s.handle_server_first(SERVER_FIRST.as_bytes())),
            ErrorKind::Auth
        );

        // Echoing our nonce without a server part is refused too.
        let mut s = scram();
        let r = s.handle_server_first(b"r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
        assert_eq!(kind(r), ErrorKind::Auth);
    }

    #[test]
    fn iteration_cap() {
        let mut s = scram();
        let r =
            s.handle_server_first(b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=100001");
        let msg = message(r);
        assert!(msg.contains("100001"), "{msg}");
        let mut s = scram();
        let r = s.handle_server_first(
            b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999999999999",
        );
        assert_eq!(kind(r), ErrorKind::Auth);
        // The cap itself is allowed.
        let mut s = scram();
        s.handle_server_first(b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=100000")
            .expect("at the cap");
    }

    #[test]
    fn malformed_server_first() {
        for bad in [
            &b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0"[..],
            b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1",
            b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=+4096",
            b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=",
            b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4k",
            b"r=rOprNGfwEbeRWgbNEkqOx,s=not base64!,i=4096",
            b"r=rOprNGfwEbeRWgbNEkqOx,s=,i=4096",
            b"r=rOprNGfwEbeRWgbNEkqOx,i=4096,s=W22ZaJ0SNY7soEsUEjb6gQ==",
            b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==",
            b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            b"",
            b"r=rOprNGfwEbeRWgbNEkqO\xff,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        ] {
            let mut s = scram();
            assert_eq!(
                kind(s.handle_server_first(bad)),
                ErrorKind::Protocol,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn extensions_after_iteration_count_are_ignored() {
        let mut s = scram();
        let msg = format!("{SERVER_FIRST},x=future");
        s.handle_server_first(msg.as_bytes())
            .expect("optional extension ignored");
    }

    #[test]
    fn mandatory_extension_rejected() {
        let mut s = scram();
        let msg = format!("m=something,{SERVER_FIRST}");
        let r = s.handle_server_first(msg.as_bytes());
        assert_eq!(kind(r), ErrorKind::Auth);
    }

    #[test]
    fn bad_server_signature() {
        let mut s = scram();
        s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        // Signature of a different exchange (the RFC's, for n=user).
        let r = s.verify_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
        assert_eq!(kind(r), ErrorKind::Auth);
        assert!(!s.is_done());

        // Truncated signature: different length, still just "wrong".
        let mut s = scram();
        s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        let r = s.verify_server_final(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0");
        assert_eq!(kind(r), ErrorKind::Auth);

        let mut s = scram();
        s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        assert_eq!(kind(s.verify_server_final(b"v=***")), ErrorKind::Protocol);

        let mut s = scram();
        s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        assert_eq!(kind(s.verify_server_final(b"x=1")), ErrorKind::Protocol);
    }

    #[test]
    fn server_error_in_final() {
        let mut s = scram();
        s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        let r = s.verify_server_final(b"e=invalid-proof");
        let msg = message(r);
        assert!(msg.contains("invalid-proof"), "{msg}");
        assert!(!s.is_done());
    }

    #[test]
    fn out_of_order_calls() {
        // Verify before server-first.
        let mut s = scram();
        let r = s.verify_server_final(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=");
        assert_eq!(kind(r), ErrorKind::Auth);

        // Server-first twice.
        let mut s = scram();
        s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        assert_eq!(
            kind(s.handle_server_first(SERVER_FIRST.as_bytes())),
            ErrorKind::Auth
        );

        // Anything after done.
        let mut s = scram();
        s.handle_server_first(SERVER_FIRST.as_bytes()).expect("ok");
        s.verify_server_final(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=")
            .expect("ok");
        let r = s.verify_server_final(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=");
        assert_eq!(kind(r), ErrorKind::Auth);
        assert_eq!(
            kind(s.handle_server_first(SERVER_FIRST.as_bytes())),
            ErrorKind::Auth
        );
    }

    #[test]
    fn username_is_escaped() {
        let s = scram().with_username("a,b=c");
        assert_eq!(
            s.client_first_message(),
            b"n,,n=a=2Cb=3Dc,r=rOprNGfwEbeRWgbNEkqO".to_vec()
        );
    }

    #[test]
    fn debug_redacts_password() {
        let s = ScramSha256::with_nonce("hunter2-secret", CLIENT_NONCE).expect("nonce");
        let dbg = format!("{s:?}");
        assert!(!dbg.contains("hunter2"), "{dbg}");
        assert!(dbg.contains("redacted"), "{dbg}");
    }

    #[test]
    fn hi_matches_pbkdf2_vectors() {
        // PBKDF2-HMAC-SHA256 test vectors (RFC 7914 section 11, dkLen 32 prefix).
        assert_eq!(
            hi(b"passwd", b"salt", 1),
            [
                0x55, 0xac, 0x04, 0x6e, 0x56, 0xe3, 0x08, 0x9f, 0xec, 0x16, 0x91, 0xc2, 0x25, 0x44,
                0xb6, 0x05, 0xf9, 0x41, 0x85, 0x21, 0x6d, 0xde, 0x04, 0x65, 0xe6, 0x8b, 0x9d, 0x57,
                0xc2, 0x0d, 0xac, 0xbc,
            ]
        );
    }
}

//! Client authentication, without I/O.
//!
//! The startup flow decodes each `Authentication*` message into an
//! [`AuthRequest`], feeds it to [`Authenticator::step`], and sends whatever
//! [`AuthResponse`] comes back (`PasswordMessage`, `SASLInitialResponse` or
//! `SASLResponse`). Supported methods: trust (no password), cleartext, MD5
//! and SCRAM-SHA-256 without channel binding.
//!
//! `hyperd` started with a password (see `HYPER_INITIAL_USER_PASSWORD`)
//! offers SASL with `SCRAM-SHA-256` only.
//!
//! Which methods a connection accepts is an [`AuthMethods`] set, checked
//! before anything is sent: the server picks the method, so a client that
//! answers whatever it is asked hands its password to anyone who can pose
//! as the server and ask for it in clear text (see
//! `Config::with_require_auth` for the default).

pub mod md5;
mod saslprep;
pub mod scram;

use std::fmt;

pub use self::md5::md5_password;
pub use self::scram::ScramSha256;

use crate::error::{Error, Result};

/// A way a server may ask the client to authenticate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthMethod {
    /// None at all: the server accepts the connection at once
    /// (`AuthenticationOk` first; hyperd's `--no-password`).
    Trust,
    /// The password itself, readable by anyone on the path
    /// (`AuthenticationCleartextPassword`).
    Cleartext,
    /// An MD5 hash of password and user name, salted by the server
    /// (`AuthenticationMD5Password`): whoever sees it can guess the
    /// password offline, and whoever poses as the server picks the salt.
    Md5,
    /// SCRAM-SHA-256 over SASL: the password never crosses the wire and
    /// the server proves that it knows it.
    ScramSha256,
}

impl AuthMethod {
    const ALL: [AuthMethod; 4] = [
        AuthMethod::Trust,
        AuthMethod::Cleartext,
        AuthMethod::Md5,
        AuthMethod::ScramSha256,
    ];

    /// The method libpq's `require_auth` calls `name` (`none`,
    /// `password`, `md5`, `scram-sha-256`): the names users of other
    /// PostgreSQL clients already know, for options given as text.
    pub fn from_libpq_name(name: &str) -> Option<AuthMethod> {
        Some(match name {
            "none" => AuthMethod::Trust,
            "password" => AuthMethod::Cleartext,
            "md5" => AuthMethod::Md5,
            "scram-sha-256" => AuthMethod::ScramSha256,
            _ => return None,
        })
    }

    const fn bit(self) -> u8 {
        match self {
            AuthMethod::Trust => 1,
            AuthMethod::Cleartext => 2,
            AuthMethod::Md5 => 4,
            AuthMethod::ScramSha256 => 8,
        }
    }
}

impl fmt::Display for AuthMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AuthMethod::Trust => "trust (no authentication)",
            AuthMethod::Cleartext => "cleartext password",
            AuthMethod::Md5 => "MD5 password",
            AuthMethod::ScramSha256 => "SCRAM-SHA-256",
        })
    }
}

/// A set of [`AuthMethod`]s a connection accepts, like libpq's
/// `require_auth`: `AuthMethods::SCRAM_SHA_256 | AuthMethods::TRUST`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AuthMethods(u8);

impl AuthMethods {
    /// No method: every connection attempt is refused.
    pub const NONE: AuthMethods = AuthMethods(0);
    /// [`AuthMethod::Trust`].
    pub const TRUST: AuthMethods = AuthMethods(AuthMethod::Trust.bit());
    /// [`AuthMethod::Cleartext`].
    pub const CLEARTEXT: AuthMethods = AuthMethods(AuthMethod::Cleartext.bit());
    /// [`AuthMethod::Md5`].
    pub const MD5: AuthMethods = AuthMethods(AuthMethod::Md5.bit());
    /// [`AuthMethod::ScramSha256`].
    pub const SCRAM_SHA_256: AuthMethods = AuthMethods(AuthMethod::ScramSha256.bit());
    /// Every method this client implements.
    pub const ALL: AuthMethods = AuthMethods(0b1111);

    /// Both sets' methods.
    pub const fn union(self, other: AuthMethods) -> AuthMethods {
        AuthMethods(self.0 | other.0)
    }

    /// This set's methods that are not in `other`.
    pub const fn without(self, other: AuthMethods) -> AuthMethods {
        AuthMethods(self.0 & !other.0)
    }

    /// Whether `method` is in the set.
    pub const fn contains(self, method: AuthMethod) -> bool {
        self.0 & method.bit() != 0
    }
}

impl std::ops::BitOr for AuthMethods {
    type Output = AuthMethods;

    fn bitor(self, other: AuthMethods) -> AuthMethods {
        self.union(other)
    }
}

impl From<AuthMethod> for AuthMethods {
    fn from(method: AuthMethod) -> AuthMethods {
        AuthMethods(method.bit())
    }
}

impl fmt::Debug for AuthMethods {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(AuthMethod::ALL.iter().filter(|m| self.contains(**m)))
            .finish()
    }
}

/// Why a connection stopped authenticating: the server asked for a
/// method its [`AuthMethods`] refuse. Nothing was sent in reply. Carried
/// as the source of an [`ErrorKind::Auth`](crate::error::ErrorKind::Auth)
/// error; [`Error::refused_auth_method`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the server asked for {method}, which this connection refuses (it accepts {allowed:?})")]
pub struct AuthMethodRefused {
    /// What the server asked for.
    pub method: AuthMethod,
    /// What the connection accepts.
    pub allowed: AuthMethods,
}

/// An `Authentication*` request from the server, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthRequest<'a> {
    /// `AuthenticationOk` (0).
    Ok,
    /// `AuthenticationCleartextPassword` (3).
    Cleartext,
    /// `AuthenticationMD5Password` (5).
    Md5 {
        /// The 4-byte salt.
        salt: [u8; 4],
    },
    /// `AuthenticationSASL` (10): the mechanisms the server offers.
    Sasl {
        /// Mechanism names, in the server's order of preference.
        mechanisms: &'a [String],
    },
    /// `AuthenticationSASLContinue` (11): the server-first message.
    SaslContinue(&'a [u8]),
    /// `AuthenticationSASLFinal` (12): the server-final message.
    SaslFinal(&'a [u8]),
    /// Any other request code (2 KerberosV5, 7 GSS, 9 SSPI, ...).
    Other(u32),
}

/// What to send back for an [`AuthRequest`].
///
/// `Debug` shows only sizes: password messages carry the password.
#[derive(Clone, PartialEq, Eq)]
pub enum AuthResponse {
    /// Nothing to send.
    None,
    /// A `PasswordMessage` body: the password (or MD5 hash) with its trailing NUL.
    Password(Vec<u8>),
    /// A `SASLInitialResponse`: the chosen mechanism and the client-first message.
    SaslInitial {
        /// The mechanism name (`SCRAM-SHA-256`).
        mechanism: &'static str,
        /// The initial response data.
        data: Vec<u8>,
    },
    /// A `SASLResponse` body (the client-final message).
    Sasl(Vec<u8>),
}

impl fmt::Debug for AuthResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthResponse::None => f.write_str("None"),
            AuthResponse::Password(p) => write!(f, "Password(<redacted, {} bytes>)", p.len()),
            AuthResponse::SaslInitial { mechanism, data } => f
                .debug_struct("SaslInitial")
                .field("mechanism", mechanism)
                .field("data", &format_args!("<{} bytes>", data.len()))
                .finish(),
            AuthResponse::Sasl(d) => write!(f, "Sasl(<{} bytes>)", d.len()),
        }
    }
}

/// Where the authentication exchange stands.
enum State {
    /// Nothing received yet.
    Start,
    /// A cleartext or MD5 password was sent; the server answers Ok or an error.
    PasswordSent,
    /// `SASLInitialResponse` sent; waiting for the server-first message.
    ScramStarted(ScramSha256),
    /// Client-final sent; waiting for the server-final message.
    ScramFinalSent(ScramSha256),
    /// The server proved it knows the password; waiting for Ok.
    ScramVerified,
    /// `AuthenticationOk` received.
    Done,
    /// A step failed; the exchange cannot continue.
    Failed,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Start => "not started",
            State::PasswordSent => "waiting for the password check",
            State::ScramStarted(_) => "waiting for the SCRAM server-first-message",
            State::ScramFinalSent(_) => "waiting for the SCRAM server-final-message",
            State::ScramVerified => "waiting for AuthenticationOk after SCRAM",
            State::Done => "done",
            State::Failed => "failed",
        }
    }
}

/// Drives one connection's authentication exchange.
///
/// Every error ends the exchange: later calls fail too. `Debug` never prints
/// the password.
pub struct Authenticator {
    user: String,
    /// Taken when first used: one exchange uses the password once.
    password: Option<String>,
    /// The methods the server may ask for; others fail before any reply.
    allowed: AuthMethods,
    state: State,
    /// Fixed SCRAM client nonce, for tests.
    #[cfg(test)]
    scram_nonce: Option<&'static str>,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("allowed", &self.allowed)
            .field("state", &self.state.name())
            .finish()
    }
}

impl Authenticator {
    /// An authenticator for `user` (as sent in the startup message), with an
    /// optional password, that accepts every method
    /// ([`with_allowed`](Self::with_allowed) narrows that).
    pub fn new(user: &str, password: Option<&str>) -> Authenticator {
        Authenticator {
            user: user.to_owned(),
            password: password.map(str::to_owned),
            allowed: AuthMethods::ALL,
            state: State::Start,
            #[cfg(test)]
            scram_nonce: None,
        }
    }

    /// Accepts only `allowed`: a request for another method fails with an
    /// [`AuthMethodRefused`] error before anything is sent, the password
    /// least of all.
    pub fn with_allowed(mut self, allowed: AuthMethods) -> Authenticator {
        self.allowed = allowed;
        self
    }

    /// `AuthenticationOk` was received.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// Handles one request from the server and returns what to send back.
    ///
    /// Errors ([`Error::auth`] unless noted): the server asks for a password
    /// and none is configured; it offers no supported SASL mechanism or asks
    /// for an unsupported method; the SCRAM exchange fails, including the
    /// server skipping its proof (`Ok` before a verified server-final);
    /// a request arrives out of order or after the end ([`Error::protocol`]).
    pub fn step(&mut self, req: AuthRequest<'_>) -> Result<AuthResponse> {
        let state = std::mem::replace(&mut self.state, State::Failed);
        let (next, response) = self.transition(state, req)?;
        self.state = next;
        Ok(response)
    }

    fn transition(&mut self, state: State, req: AuthRequest<'_>) -> Result<(State, AuthResponse)> {
        if let AuthRequest::Other(code) = req {
            return Err(Error::auth(format!(
                "server requested unsupported authentication method {} (code {code})",
                method_name(code)
            )));
        }
        // The method is the server's choice: checked first, before a
        // password is looked at, let alone sent.
        let method = match (&state, &req) {
            (State::Start, AuthRequest::Ok) => Some(AuthMethod::Trust),
            (State::Start, AuthRequest::Cleartext) => Some(AuthMethod::Cleartext),
            (State::Start, AuthRequest::Md5 { .. }) => Some(AuthMethod::Md5),
            (State::Start, AuthRequest::Sasl { .. }) => Some(AuthMethod::ScramSha256),
            _ => None,
        };
        if let Some(method) = method.filter(|m| !self.allowed.contains(*m)) {
            return Err(
                Error::auth("refusing to authenticate").with_source(AuthMethodRefused {
                    method,
                    allowed: self.allowed,
                }),
            );
        }
        match (state, req) {
            (State::Start | State::PasswordSent | State::ScramVerified, AuthRequest::Ok) => {
                Ok((State::Done, AuthResponse::None))
            }
            (State::ScramStarted(_) | State::ScramFinalSent(_), AuthRequest::Ok) => {
                Err(Error::auth(
                    "server ended SCRAM authentication without proving it knows the password",
                ))
            }

            (State::Start, AuthRequest::Cleartext) => {
                let password = self.take_password("cleartext")?;
                if password.contains('\0') {
                    return Err(Error::invalid_input("password contains a NUL byte"));
                }
                Ok((
                    State::PasswordSent,
                    AuthResponse::Password(nul_terminated(password)),
                ))
            }
            (State::Start, AuthRequest::Md5 { salt }) => {
                let password = self.take_password("MD5")?;
                let hashed = md5_password(&self.user, &password, salt);
                Ok((
                    State::PasswordSent,
                    AuthResponse::Password(nul_terminated(hashed)),
                ))
            }
            (State::Start, AuthRequest::Sasl { mechanisms }) => {
                if !mechanisms.iter().any(|m| m == scram::MECHANISM) {
                    return Err(Error::auth(format!(
                        "server offers no supported SASL mechanism (offered: {}; supported: {})",
                        if mechanisms.is_empty() {
                            "none".to_owned()
                        } else {
                            mechanisms.join(", ")
                        },
                        scram::MECHANISM
                    )));
                }
                let password = self.take_password(scram::MECHANISM)?;
                let scram = self.new_scram(&password)?;
                let data = scram.client_first_message();
                Ok((
                    State::ScramStarted(scram),
                    AuthResponse::SaslInitial {
                        mechanism: scram::MECHANISM,
                        data,
                    },
                ))
            }
            (State::ScramStarted(mut scram), AuthRequest::SaslContinue(data)) => {
                let client_final = scram.handle_server_first(data)?;
                Ok((
                    State::ScramFinalSent(scram),
                    AuthResponse::Sasl(client_final),
                ))
            }
            (State::ScramStarted(_), AuthRequest::SaslFinal(_)) => Err(Error::auth(
                "SCRAM server-final-message received before the server-first-message",
            )),
            (State::ScramFinalSent(mut scram), AuthRequest::SaslFinal(data)) => {
                scram.verify_server_final(data)?;
                Ok((State::ScramVerified, AuthResponse::None))
            }
            (State::Failed, _) => Err(Error::auth("authentication already failed")),
            (State::Done, _) => Err(Error::protocol(
                "authentication request received after authentication completed",
            )),
            (state, req) => Err(Error::protocol(format!(
                "unexpected authentication request {} while {}",
                request_name(&req),
                state.name()
            ))),
        }
    }

    fn take_password(&mut self, method: &str) -> Result<String> {
        self.password.take().ok_or_else(|| {
            Error::auth(format!(
                "server requires a password ({method} authentication) but none was configured"
            ))
        })
    }

    fn new_scram(&self, password: &str) -> Result<ScramSha256> {
        #[cfg(test)]
        if let Some(nonce) = self.scram_nonce {
            return ScramSha256::with_nonce(password, nonce);
        }
        ScramSha256::new(password)
    }
}

fn nul_terminated(s: String) -> Vec<u8> {
    let mut v = s.into_bytes();
    v.push(0);
    v
}

fn request_name(req: &AuthRequest<'_>) -> &'static str {
    match req {
        AuthRequest::Ok => "AuthenticationOk",
        AuthRequest::Cleartext => "AuthenticationCleartextPassword",
        AuthRequest::Md5 { .. } => "AuthenticationMD5Password",
        AuthRequest::Sasl { .. } => "AuthenticationSASL",
        AuthRequest::SaslContinue(_) => "AuthenticationSASLContinue",
        AuthRequest::SaslFinal(_) => "AuthenticationSASLFinal",
        AuthRequest::Other(_) => "Authentication (other)",
    }
}

/// Names of the authentication codes this client does not implement.
fn method_name(code: u32) -> &'static str {
    match code {
        2 => "KerberosV5",
        6 => "SCMCredential",
        7 => "GSSAPI",
        8 => "GSSAPI continue",
        9 => "SSPI",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
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
}

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
mod tests;

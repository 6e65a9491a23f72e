//! Startup: the startup message, authentication, then parameter statuses and
//! the backend key until the first `ReadyForQuery`.

use crate::error::{Error, Result};
use crate::protocol::auth::{AuthMethods, AuthRequest, AuthResponse, Authenticator};
use crate::protocol::backend::{Authentication, Message};
use crate::protocol::ops::{unexpected, Operation};
use crate::protocol::{frontend, Session};

/// The startup handshake.
#[derive(Debug)]
pub struct Startup {
    auth: Authenticator,
}

impl Startup {
    /// Queues the startup message. `params` are extra session settings;
    /// `allowed` the authentication methods the server may ask for.
    pub fn send<'a>(
        session: &mut Session,
        user: &str,
        password: Option<&str>,
        allowed: AuthMethods,
        database: Option<&str>,
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Startup> {
        frontend::startup(session.write_buf(), user, database, params)?;
        session.expect_ready();
        Ok(Startup {
            auth: Authenticator::new(user, password).with_allowed(allowed),
        })
    }
}

impl Operation for Startup {
    type Output = ();

    fn on_message(&mut self, session: &mut Session, msg: Message) -> Result<Option<()>> {
        match msg {
            Message::Authentication(req) => {
                let req = match &req {
                    Authentication::Ok => AuthRequest::Ok,
                    Authentication::CleartextPassword => AuthRequest::Cleartext,
                    Authentication::Md5Password { salt } => AuthRequest::Md5 { salt: *salt },
                    Authentication::Sasl { mechanisms } => AuthRequest::Sasl { mechanisms },
                    Authentication::SaslContinue(d) => AuthRequest::SaslContinue(d),
                    Authentication::SaslFinal(d) => AuthRequest::SaslFinal(d),
                    Authentication::Unsupported(code) => AuthRequest::Other(*code),
                };
                match self.auth.step(req)? {
                    AuthResponse::None => {}
                    AuthResponse::Password(body) => {
                        frontend::password_message(session.write_buf(), &body)?
                    }
                    AuthResponse::SaslInitial { mechanism, data } => {
                        frontend::sasl_initial_response(session.write_buf(), mechanism, &data)?
                    }
                    AuthResponse::Sasl(data) => {
                        frontend::password_message(session.write_buf(), &data)?
                    }
                }
                Ok(None)
            }
            Message::BackendKeyData {
                process_id,
                secret_key,
            } => {
                session.set_backend_key(process_id, secret_key);
                Ok(None)
            }
            Message::NegotiateProtocolVersion { unrecognized, .. } => {
                tracing::debug!(?unrecognized, "server does not know some startup options");
                Ok(None)
            }
            Message::ReadyForQuery(_) => {
                if !self.auth.is_done() {
                    return Err(Error::auth(
                        "server finished startup before authentication completed",
                    ));
                }
                session.finish_startup();
                Ok(Some(()))
            }
            other => Err(unexpected("startup", &other)),
        }
    }
}

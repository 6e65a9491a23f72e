//! PLACEHOLDER (lead): replaced by the real auth module (SCRAM/MD5) shortly.
use crate::error::{Error, Result};

pub enum AuthRequest<'a> { Ok, Cleartext, Md5 { salt: [u8; 4] }, Sasl { mechanisms: &'a [String] }, SaslContinue(&'a [u8]), SaslFinal(&'a [u8]), Other(u32) }
pub enum AuthResponse { None, Password(Vec<u8>), SaslInitial { mechanism: &'static str, data: Vec<u8> }, Sasl(Vec<u8>) }
#[derive(Debug)]
pub struct Authenticator { done: bool }
impl Authenticator {
    pub fn new(_user: &str, _password: Option<&str>) -> Authenticator { Authenticator { done: false } }
    pub fn step(&mut self, req: AuthRequest<'_>) -> Result<AuthResponse> {
        match req { AuthRequest::Ok => { self.done = true; Ok(AuthResponse::None) } _ => Err(Error::auth("placeholder")) }
    }
    pub fn is_done(&self) -> bool { self.done }
}

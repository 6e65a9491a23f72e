//! PostgreSQL's MD5 password authentication (`AuthenticationMD5Password`).

use std::fmt::Write as _;

use ::md5::{Digest, Md5};

/// The password response to an MD5 challenge:
/// `"md5" + hex(md5(hex(md5(password + user)) + salt))`.
///
/// `user` is the user name sent in the startup message.
pub fn md5_password(user: &str, password: &str, salt: [u8; 4]) -> String {
    let mut inner = Md5::new();
    inner.update(password.as_bytes());
    inner.update(user.as_bytes());
    let inner_hex = hex(&inner.finalize());

    let mut outer = Md5::new();
    outer.update(inner_hex.as_bytes());
    outer.update(salt);
    format!("md5{}", hex(&outer.finalize()))
}

/// Lower-case hex.
fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // Computed independently with Python's hashlib.
        assert_eq!(
            md5_password("user", "pencil", [1, 2, 3, 4]),
            "md54376eb6913b38f9aaff38dc7cf19ca76"
        );
        assert_eq!(
            md5_password("tableau_internal_user", "s3cret", [0xde, 0xad, 0xbe, 0xef]),
            "md55675fc910896d7e4c83e0dd61d5201c3"
        );
    }

    #[test]
    fn shape() {
        let r = md5_password("u", "", [0; 4]);
        assert_eq!(r.len(), 35);
        assert!(r.starts_with("md5"));
        assert!(r[3..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    }
}

//! The password a TCP hyperd gets when the caller gives none.
//!
//! hyperd on loopback TCP with `--no-password` lets in every process on the
//! machine, whoever runs it, and that process then reads and writes files
//! as the user who started hyperd. A password only the owner's process
//! knows closes that: it reaches hyperd through the environment (see
//! `HyperProcess::new`), which other users cannot read, and connections
//! made from [`HyperProcess::config`](super::HyperProcess::config) carry it.

use std::fmt::Write as _;
use std::io;

use crate::error::{Error, Result};

/// Random bytes in a generated password: 256 bits, beyond guessing even at
/// hyperd's rate of SCRAM attempts.
const RANDOM_BYTES: usize = 32;

/// A fresh password: [`RANDOM_BYTES`] from the operating system, as
/// lowercase hex (ASCII, so SASLprep leaves it as it is).
pub(super) fn generate() -> Result<String> {
    let mut raw = [0u8; RANDOM_BYTES];
    getrandom::getrandom(&mut raw).map_err(|e| {
        Error::io(
            "generating a password for hyperd",
            io::Error::other(e.to_string()),
        )
    })?;
    let mut hex = String::with_capacity(RANDOM_BYTES * 2);
    for byte in raw {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    Ok(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_long_hex_and_fresh() {
        let a = generate().expect("random bytes");
        let b = generate().expect("random bytes");
        assert_eq!(a.len(), RANDOM_BYTES * 2, "{a}");
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{a}"
        );
        assert_ne!(a, b, "two calls gave the same password");
    }
}

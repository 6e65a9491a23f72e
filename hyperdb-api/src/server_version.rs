//! The server's version as reported at startup, parsed.
//!
//! hyperd reports two (measured on 0.0.26963): `server_version` is the
//! PostgreSQL version it emulates (`9.1.0`), `hyper_version` its own,
//! after its branch and before its revision (`main.0.0.26963.r84171622`).
//! Both parse into a [`ServerVersion`].

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A version `major.minor.patch` as a server reported it. Missing parts
/// are 0, and a leading branch name and anything after the numbers are
/// kept only in [`Self::text`] (`"14.2 (Debian 14.2-1)"` is 14.2.0,
/// `"main.0.0.26963.r84171622"` 0.0.26963), so versions compare by number.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    text: String,
}

impl ServerVersion {
    /// The version as the server wrote it.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl FromStr for ServerVersion {
    type Err = Error;

    fn from_str(text: &str) -> Result<ServerVersion> {
        let head = text.trim_start();
        // hyperd's own version names its branch first: `main.0.0.26963.r8417`.
        let head = match head.split_once('.') {
            Some((branch, rest)) if branch.starts_with(|c: char| c.is_ascii_alphabetic()) => rest,
            _ => head,
        };
        let numbers = head
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .map_or(head, |end| &head[..end]);
        let mut parts = numbers.split('.');
        let mut next = |required: bool| -> Result<u32> {
            match parts.next() {
                Some(p) if !p.is_empty() => p.parse().map_err(|_| bad(text)),
                None if !required => Ok(0),
                _ => Err(bad(text)),
            }
        };
        let major = next(true)?;
        let minor = next(false)?;
        let patch = next(false)?;
        Ok(ServerVersion {
            major,
            minor,
            patch,
            text: text.to_owned(),
        })
    }
}

fn bad(text: &str) -> Error {
    Error::invalid_argument(
        "server version",
        format!("{text:?} is not a version (major[.minor[.patch]])"),
    )
}

impl fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The parameter `name` parsed, for the connections' `server_version` and
/// `hyper_version`: a missing one or one that is no version is an error
/// naming it.
pub(crate) fn parse_parameter(name: &str, value: Option<&str>) -> Result<ServerVersion> {
    let value = value
        .ok_or_else(|| Error::invalid_argument(name, "the server did not report it at startup"))?;
    value.parse().map_err(|e| match e {
        Error::InvalidArgument { message, .. } => Error::invalid_argument(name, message),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> (u32, u32, u32) {
        let v: ServerVersion = s.parse().unwrap();
        (v.major, v.minor, v.patch)
    }

    #[test]
    fn parses_what_servers_send() {
        assert_eq!(v("9.1.0"), (9, 1, 0));
        assert_eq!(v("0.0.26963"), (0, 0, 26963));
        assert_eq!(v("main.0.0.26963.r84171622"), (0, 0, 26963));
        assert_eq!(v("16"), (16, 0, 0));
        assert_eq!(v("14.2 (Debian 14.2-1.pgdg110+1)"), (14, 2, 0));
        assert_eq!(v("17beta1"), (17, 0, 0));
        let parsed: ServerVersion = "9.1.0".parse().unwrap();
        assert_eq!(parsed.text(), "9.1.0");
        assert_eq!(parsed.to_string(), "9.1.0");
        assert!(parsed < "9.10".parse().unwrap());
    }

    #[test]
    fn refuses_what_is_no_version() {
        for s in ["", "beta", ".1", "1..2", "99999999999", "main.x"] {
            assert!(s.parse::<ServerVersion>().is_err(), "{s:?}");
        }
        let e = parse_parameter("server_version", None).unwrap_err();
        assert!(e.to_string().contains("server_version"), "{e}");
        let e = parse_parameter("hyper_version", Some("x")).unwrap_err();
        assert!(e.to_string().contains("hyper_version"), "{e}");
        assert_eq!(
            parse_parameter("server_version", Some("9.1.0"))
                .unwrap()
                .minor,
            1
        );
    }
}

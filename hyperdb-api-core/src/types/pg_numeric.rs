//! PostgreSQL's binary NUMERIC: `i16 ndigits, i16 weight, u16 sign,
//! i16 dscale`, then `ndigits` base-10000 digits, most significant first;
//! the first digit is worth `10000^weight`.
//!
//! hyperd reads this format more narrowly than PostgreSQL. Measured on
//! hyperd 0.0.26963 with 980 values over precisions 1..=38 and all scales:
//!
//! * `dscale` must equal the scale of the NUMERIC type the server infers for
//!   the parameter, or it fails with "cannot handle truncation"; digits past
//!   `dscale` are silently dropped, so the encoder never sends any.
//! * A zero integer digit in front of a fraction (`[0, 5000]`, weight 0) is
//!   refused for NUMERIC(18,18) and NUMERIC(38,38) ("variable-length
//!   numerics are not supported"), and a negative weight is refused when
//!   `dscale < 4` or `weight < -1`. The layout below avoids both: fractions
//!   of magnitude < 1 use weight -1 with every fractional group present when
//!   `dscale >= 4`, and one zero integer group otherwise.
//!
//! PostgreSQL itself accepts all of these non-canonical forms.

#[cfg(test)]
use bytes::{BufMut, BytesMut};

use super::numeric::{Numeric, POW10};
use crate::error::{Error, Result};

const SIGN_POSITIVE: u16 = 0x0000;
const SIGN_NEGATIVE: u16 = 0x4000;
const SIGN_NAN: u16 = 0xC000;
const SIGN_POS_INF: u16 = 0xD000;
const SIGN_NEG_INF: u16 = 0xF000;

/// Appends `n` as a binary NUMERIC with `dscale = n.scale()`. Parameters
/// bind NUMERIC as text (see `pg_binary`); this checks the decoder.
#[cfg(test)]
pub(crate) fn encode(n: Numeric, buf: &mut BytesMut) {
    let scale = usize::from(n.scale());
    let abs = n.unscaled().unsigned_abs();
    let unit = POW10[scale].unsigned_abs();
    let (mut int_part, mut frac) = (abs / unit, abs % unit);

    // Base-10000 digits, least significant first. 38 digits make at most 10
    // integer and 10 fractional groups.
    let mut rev = [0u16; 20];
    let mut len = 0;
    let frac_groups = scale.div_ceil(4);
    if frac_groups > 0 {
        // The last fractional group is padded on the right: 0.05 is [0500].
        let tail_digits = scale - (frac_groups - 1) * 4;
        let tail_unit = POW10[tail_digits].unsigned_abs();
        let pad = POW10[4 - tail_digits].unsigned_abs();
        rev[0] = ((frac % tail_unit) * pad) as u16;
        frac /= tail_unit;
        for slot in rev.iter_mut().take(frac_groups).skip(1) {
            *slot = (frac % 10_000) as u16;
            frac /= 10_000;
        }
        len = frac_groups;
    }
    let weight: i16 = if abs == 0 {
        len = 0;
        0
    } else if int_part == 0 && scale >= 4 {
        -1
    } else {
        let first_int = len;
        loop {
            rev[len] = (int_part % 10_000) as u16;
            int_part /= 10_000;
            len += 1;
            if int_part == 0 {
                break;
            }
        }
        // At most 10 integer groups.
        (len - first_int - 1) as i16
    };
    let sign = if n.is_negative() {
        SIGN_NEGATIVE
    } else {
        SIGN_POSITIVE
    };
    // len <= 20 and scale <= 38 fit an i16.
    buf.put_i16(len as i16);
    buf.put_i16(weight);
    buf.put_u16(sign);
    buf.put_i16(scale as i16);
    for digit in rev[..len].iter().rev() {
        buf.put_u16(*digit);
    }
}

/// Reads a binary NUMERIC exactly; errors for NaN, infinities, malformed
/// input and values beyond 38 digits.
pub(crate) fn decode(raw: &[u8]) -> Result<Numeric> {
    let bad = |why: String| Error::conversion(format!("invalid binary NUMERIC: {why}"));
    let word = |i: usize| raw.get(i..i + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let (Some(ndigits), Some(weight), Some(sign), Some(dscale)) =
        (word(0), word(2), word(4), word(6))
    else {
        return Err(bad(format!(
            "{} bytes is shorter than the 8-byte header",
            raw.len()
        )));
    };
    let (ndigits, weight, dscale) = (ndigits as i16, i32::from(weight as i16), dscale as i16);
    if ndigits < 0 || raw.len() != 8 + 2 * ndigits as usize {
        return Err(bad(format!(
            "{ndigits} digits do not match {} bytes",
            raw.len()
        )));
    }
    let negative = match sign {
        SIGN_POSITIVE => false,
        SIGN_NEGATIVE => true,
        SIGN_NAN => return Err(Error::conversion("NUMERIC NaN has no exact value")),
        SIGN_POS_INF | SIGN_NEG_INF => {
            return Err(Error::conversion("NUMERIC infinity has no exact value"))
        }
        other => return Err(bad(format!("sign word {other:#06x}"))),
    };
    let scale = u8::try_from(dscale)
        .ok()
        .filter(|s| *s <= 38)
        .ok_or_else(|| bad(format!("dscale {dscale}")))?;
    let overflow = || Error::conversion("binary NUMERIC has more than 38 digits");
    let mut acc: i128 = 0;
    for i in 0..ndigits as usize {
        let d = i128::from(word(8 + 2 * i).unwrap_or(0));
        if d >= 10_000 {
            return Err(bad(format!("digit {d} is not base 10000")));
        }
        // Decimal exponent of this group's last digit, relative to dscale.
        let exp = 4 * (weight - i as i32) + i32::from(dscale);
        if exp >= 0 {
            if d != 0 {
                let factor = usize::try_from(exp)
                    .ok()
                    .and_then(|e| POW10.get(e))
                    .ok_or_else(overflow)?;
                acc = d
                    .checked_mul(*factor)
                    .and_then(|v| acc.checked_add(v))
                    .ok_or_else(overflow)?;
            }
        } else {
            let drop = -exp;
            let divisor = if drop >= 4 {
                10_000
            } else {
                POW10[drop as usize]
            };
            if d % divisor != 0 {
                return Err(bad(format!("digits beyond dscale {dscale}")));
            }
            acc = acc.checked_add(d / divisor).ok_or_else(overflow)?;
        }
    }
    Numeric::new(if negative { -acc } else { acc }, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(s: &str) -> Vec<u8> {
        let mut buf = BytesMut::new();
        encode(s.parse().expect(s), &mut buf);
        buf.to_vec()
    }

    fn hex(s: &str) -> String {
        enc(s).iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn layouts_hyperd_accepts() {
        // Each of these was sent to hyperd as a parameter of
        // `SELECT $1::numeric(p,s)` and came back as the same text.
        assert_eq!(hex("12.345"), "0002000000000003000c0d7a");
        assert_eq!(hex("-0.05"), "0002000040000002000001f4");
        assert_eq!(hex("0.000"), "0000000000000003");
        assert_eq!(hex("0.00001"), "0002ffff00000005000003e8");
        assert_eq!(
            hex("100000000000000000000"),
            "0006000500000000000100000000000000000000"
        );
        assert_eq!(
            hex("0.500000000000000000"),
            "0005ffff0000001213880000000000000000"
        );
        assert_eq!(hex("-0.5"), "000200004000000100001388");
    }

    #[test]
    fn round_trips_edges() {
        let max = "9".repeat(38);
        let cases = [
            "0".to_string(),
            "1".to_string(),
            "-1".to_string(),
            "0.0001".to_string(),
            "9999.9999".to_string(),
            "10000".to_string(),
            "-123456789012345678901234567890.1234".to_string(),
            max.clone(),
            format!("-{max}"),
            format!("0.{max}"),
            format!("-9.{}", &max[..37]),
            "0.000000000000000001".to_string(),
            "123.4500".to_string(),
        ];
        for text in &cases {
            let n: Numeric = text.parse().expect(text);
            let back = decode(&enc(text)).expect(text);
            assert_eq!(back.to_string(), n.to_string(), "{text}");
            assert_eq!(back.scale(), n.scale());
        }
    }

    #[test]
    fn decodes_canonical_postgres_forms() {
        // What PostgreSQL itself sends: stripped leading and trailing groups.
        let pg = |ndigits: i16, weight: i16, sign: u16, dscale: i16, digits: &[u16]| {
            let mut v = Vec::new();
            for w in [ndigits as u16, weight as u16, sign, dscale as u16]
                .iter()
                .chain(digits)
            {
                v.extend_from_slice(&w.to_be_bytes());
            }
            v
        };
        let got = |raw: Vec<u8>| decode(&raw).map(|n| n.to_string()).ok();
        assert_eq!(
            got(pg(1, -1, SIGN_NEGATIVE, 2, &[500])).as_deref(),
            Some("-0.05")
        );
        assert_eq!(
            got(pg(1, 5, 0, 0, &[1])).as_deref(),
            Some("100000000000000000000")
        );
        assert_eq!(got(pg(1, -2, 0, 5, &[1000])).as_deref(), Some("0.00001"));
        assert_eq!(got(pg(0, 0, 0, 2, &[])).as_deref(), Some("0.00"));
        assert!(decode(&pg(0, 0, SIGN_NAN, 0, &[])).is_err());
        assert!(decode(&pg(0, 0, SIGN_POS_INF, 0, &[])).is_err());
        assert!(decode(&pg(1, 0, 0x1234, 0, &[1])).is_err());
        assert!(decode(&pg(1, 0, 0, 0, &[10_000])).is_err());
        assert!(decode(&pg(2, 0, 0, 0, &[1])).is_err()); // missing digit bytes
        assert!(decode(&pg(1, 0, 0, 39, &[1])).is_err());
        assert!(decode(&pg(1, 10, 0, 0, &[1])).is_err()); // 10^40
        assert!(decode(&pg(2, 0, 0, 1, &[1, 2345])).is_err()); // digits past dscale
        assert!(decode(&[0, 1]).is_err());
    }
}

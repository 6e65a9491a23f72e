use super::*;

fn num(s: &str) -> Numeric {
    s.parse().expect(s)
}

#[test]
fn parses_and_prints_exactly() {
    for (text, unscaled, scale) in [
        ("0", 0, 0),
        ("-0.05", -5, 2),
        ("-0.5", -5, 1),
        ("123.4500", 1_234_500, 4),
        ("0.000", 0, 3),
        ("99999999999999999999999999999999999999", MAX_UNSCALED, 0),
        (
            "-9.9999999999999999999999999999999999999",
            -MAX_UNSCALED,
            37,
        ),
        (
            "0.12345678901234567890123456789012345678",
            12_345_678_901_234_567_890_123_456_789_012_345_678,
            38,
        ),
        ("1", 1, 0),
    ] {
        let n = num(text);
        assert_eq!((n.unscaled(), n.scale()), (unscaled, scale), "{text}");
        assert_eq!(n.to_string(), text);
    }
}

#[test]
fn parse_accepts_loose_forms() {
    assert_eq!(num("+1.5").to_string(), "1.5");
    assert_eq!(num(".5").to_string(), "0.5");
    assert_eq!(num("5.").to_string(), "5");
    assert_eq!(num(" 007.10 ").to_string(), "7.10");
    assert_eq!(num("-0").to_string(), "0");
    // Leading zeros do not count toward the 38 digits.
    assert_eq!(
        num("000000000099999999999999999999999999999999999999").unscaled(),
        MAX_UNSCALED
    );
}

#[test]
fn only_ascii_white_space_goes_around_the_digits() {
    assert_eq!(num(" \t1.5\r\n").to_string(), "1.5");
    for text in ["\u{feff}1.5", "\u{a0}2.5\u{a0}", "2.5\u{3000}"] {
        assert!(text.parse::<Numeric>().is_err(), "{text:?}");
    }
}

#[test]
fn parse_errors() {
    for bad in [
        "",
        "-",
        ".",
        "1.2.3",
        "1e",
        "1e+",
        "e5",
        "1e5.0",
        "1e-39",
        "1e38",
        "NaN",
        "12a",
        "--1",
        "100000000000000000000000000000000000000",
    ] {
        assert!(bad.parse::<Numeric>().is_err(), "{bad}");
    }
    // 39 digits after the point; 39 significant digits.
    assert!(format!("0.{}1", "0".repeat(38)).parse::<Numeric>().is_err());
    assert!(format!("1.{}1", "0".repeat(37)).parse::<Numeric>().is_err());
    assert!(format!("1{}", "0".repeat(38)).parse::<Numeric>().is_err());
}

#[test]
fn parse_takes_exponents() {
    for (text, unscaled, scale) in [
        ("1e5", 100_000, 0),
        ("1E+5", 100_000, 0),
        ("-1.5e1", -15, 0),
        ("1.50e1", 150, 1),
        ("1e-3", 1, 3),
        ("12.5E-2", 125, 3),
        ("0e10", 0, 0),
        ("0.00e-3", 0, 5),
        ("1e37", 10_i128.pow(37), 0),
        ("1e-38", 1, 38),
    ] {
        let n = num(text);
        assert_eq!((n.unscaled(), n.scale()), (unscaled, scale), "{text}");
    }
}

#[test]
fn zeros_at_the_end_of_the_fraction_give_way_to_38_digits() {
    // The value is exact either way; Tableau's Hyper API stores these.
    for zeros in [37, 38, 39, 60] {
        let n = num(&format!("1.5{}", "0".repeat(zeros)));
        assert_eq!(n.unscaled(), 15 * 10_i128.pow(36), "{zeros}");
        assert_eq!(n.scale(), 37, "{zeros}");
    }
    let n = num(&format!("-0.{}5{}", "0".repeat(30), "0".repeat(20)));
    assert_eq!((n.unscaled(), n.scale()), (-5 * 10_i128.pow(7), 38));
    // Zeros before the point stay: 10^38 needs 39 digits.
    assert!(format!("1{}.000", "0".repeat(38))
        .parse::<Numeric>()
        .is_err());
    // An exact value with 36 zeros and 2 digits after the point keeps them.
    let n = num(&format!("{}.25", "9".repeat(36)));
    assert_eq!(n.scale(), 2);
}

#[test]
fn new_validates() {
    assert!(Numeric::new(MAX_UNSCALED + 1, 0).is_err());
    assert!(Numeric::new(-MAX_UNSCALED - 1, 0).is_err());
    assert!(Numeric::new(1, 39).is_err());
    assert!(Numeric::new(MAX_UNSCALED, 38).is_ok());
}

#[test]
fn comparison_is_numeric() {
    assert_eq!(num("1.0"), num("1.00"));
    assert!(num("1.01") > num("1.0"));
    assert!(num("-0.5") < num("0"));
    assert!(num("-0.05") > num("-0.5"));
    assert!(
        num("99999999999999999999999999999999999999")
            > num("0.12345678901234567890123456789012345678")
    );
    assert!(num("-99999999999999999999999999999999999999") < num("-0.1"));
    let hash = |n: Numeric| {
        use std::collections::hash_map::DefaultHasher;
        let mut h = DefaultHasher::new();
        n.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(num("2.50")), hash(num("2.5")));
    assert_eq!(hash(num("0.000")), hash(num("0")));
}

#[test]
fn rescale_never_rounds() {
    assert_eq!(
        num("1.5").rescale(3).map(|n| n.to_string()).ok().as_deref(),
        Some("1.500")
    );
    assert_eq!(
        num("1.500")
            .rescale(1)
            .map(|n| n.to_string())
            .ok()
            .as_deref(),
        Some("1.5")
    );
    assert!(num("1.55").rescale(1).is_err());
    assert!(num("99999999999999999999").rescale(19).is_err());
    assert_eq!(num("1.500").normalize().to_string(), "1.5");
}

#[test]
fn column_fit() {
    assert_eq!(
        num("12.5").for_column(18, 3).map(Numeric::unscaled).ok(),
        Some(12_500)
    );
    assert!(num("1234").for_column(5, 2).is_err()); // 1234.00 needs 6 digits
    assert!(num("0.001").for_column(5, 2).is_err());
    assert!(num("1").for_column(39, 0).is_err());
    assert_eq!(
        num("-0.5").for_column(1, 1).map(Numeric::unscaled).ok(),
        Some(-5)
    );
}

#[test]
fn precision_and_conversions() {
    assert_eq!(num("0").precision(), 1);
    assert_eq!(num("-0.05").precision(), 1);
    assert_eq!(num("123.4500").precision(), 7);
    assert_eq!(
        Numeric::new(MAX_UNSCALED, 0).map(Numeric::precision).ok(),
        Some(38)
    );
    assert_eq!(Numeric::from(i64::MIN).to_string(), "-9223372036854775808");
    assert_eq!(Numeric::from(u64::MAX).precision(), 20);
    assert!(Numeric::try_from(i128::MAX).is_err());
    assert_eq!(num("-0.05").to_f64(), -0.05);
    assert_eq!(format!("{:>8}", num("-1.5")), "    -1.5");
    assert_eq!(format!("{:+}", num("1.5")), "+1.5");
}

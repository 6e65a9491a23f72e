use super::*;

/// (type, OID, typmod, format_type spelling) as hyperd 0.0.26963 reported
/// them for a table with one column of each type.
const MEASURED: &[(SqlType, u32, i32, &str)] = &[
    (SqlType::Bool, 16, -1, "boolean"),
    (SqlType::SmallInt, 21, -1, "smallint"),
    (SqlType::Int, 23, -1, "integer"),
    (SqlType::BigInt, 20, -1, "bigint"),
    (SqlType::Real, 700, -1, "real"),
    (SqlType::Double, 701, -1, "double precision"),
    (SqlType::Oid, 26, -1, "oid"),
    (
        SqlType::Numeric {
            precision: 18,
            scale: 3,
        },
        1700,
        1_179_655,
        "numeric(18,3)",
    ),
    (
        SqlType::Numeric {
            precision: 10,
            scale: 0,
        },
        1700,
        655_364,
        "numeric(10,0)",
    ),
    (
        SqlType::Numeric {
            precision: 5,
            scale: 5,
        },
        1700,
        327_689,
        "numeric(5,5)",
    ),
    (
        SqlType::Numeric {
            precision: 38,
            scale: 2,
        },
        1700,
        2_490_374,
        "numeric(38,2)",
    ),
    (SqlType::Text, 25, -1, "text"),
    (SqlType::Varchar(10), 1043, 14, "character varying(10)"),
    (SqlType::Varchar(1), 1043, 5, "character varying(1)"),
    (SqlType::Char(7), 1042, 11, "character(7)"),
    (SqlType::Char(1), 18, -1, "character(1)"),
    (SqlType::Json, 114, -1, "json"),
    (SqlType::Bytea, 17, -1, "bytea"),
    (SqlType::Date, 1082, -1, "date"),
    (SqlType::Time, 1083, -1, "time"),
    (SqlType::Timestamp, 1114, -1, "timestamp"),
    (SqlType::TimestampTz, 1184, -1, "timestamptz"),
    (SqlType::Interval, 1186, -1, "interval"),
    (SqlType::Geography, 5003, -1, "tabgeography"),
];

#[test]
fn oid_and_typmod_match_hyperd() {
    for &(ty, oid, typmod, name) in MEASURED {
        assert_eq!(ty.oid(), oid, "{ty}");
        assert_eq!(ty.typmod(), typmod, "{ty}");
        assert_eq!(
            SqlType::from_oid_typmod(oid, typmod).ok(),
            Some(ty),
            "{oid}/{typmod}"
        );
        assert_eq!(name.parse::<SqlType>().ok(), Some(ty), "{name}");
    }
}

#[test]
fn display_round_trips_through_from_str() {
    for &(ty, ..) in MEASURED {
        let text = ty.to_string();
        assert_eq!(text.parse::<SqlType>().ok(), Some(ty), "{text}");
        assert_eq!(
            text.to_lowercase().parse::<SqlType>().ok(),
            Some(ty),
            "{text}"
        );
    }
    assert_eq!(
        SqlType::Numeric {
            precision: 18,
            scale: 3
        }
        .to_string(),
        "NUMERIC(18,3)"
    );
    assert_eq!(SqlType::TimestampTz.to_string(), "TIMESTAMP WITH TIME ZONE");
}

#[test]
fn parses_aliases_like_hyperd() {
    let cases: &[(&str, SqlType)] = &[
        ("INT4", SqlType::Int),
        ("  Int8 ", SqlType::BigInt),
        ("bool", SqlType::Bool),
        ("FLOAT", SqlType::Double),
        ("float(24)", SqlType::Real),
        ("float8", SqlType::Double),
        ("DOUBLE   PRECISION", SqlType::Double),
        (
            "decimal(18, 2)",
            SqlType::Numeric {
                precision: 18,
                scale: 2,
            },
        ),
        (
            "NUMERIC(18)",
            SqlType::Numeric {
                precision: 18,
                scale: 0,
            },
        ),
        (
            "numeric",
            SqlType::Numeric {
                precision: 38,
                scale: 0,
            },
        ),
        ("varchar", SqlType::Text),
        ("CHARACTER VARYING (5)", SqlType::Varchar(5)),
        ("char", SqlType::Char(1)),
        ("\"char\"", SqlType::Char(1)),
        ("bpchar", SqlType::Char(1)),
        ("character(3)", SqlType::Char(3)),
        ("TIMESTAMP WITHOUT TIME ZONE", SqlType::Timestamp),
        ("timestamptz", SqlType::TimestampTz),
        ("time without time zone", SqlType::Time),
        ("TABLEAU.TABGEOGRAPHY", SqlType::Geography),
        ("geography", SqlType::Geography),
    ];
    for (text, ty) in cases {
        assert_eq!(text.parse::<SqlType>().ok(), Some(*ty), "{text}");
    }
}

#[test]
fn rejects_what_hyperd_rejects() {
    for text in [
        "numeric(39,0)",
        "numeric(0,0)",
        "numeric(5,6)",
        "numeric(1,2,3)",
        "varchar(0)",
        "char(0)",
        "int(4)",
        "float(54)",
        "varchar(x)",
        "numeric(18,2",
        "numeric(18,2) x",
        "uuid",
        "",
    ] {
        assert!(text.parse::<SqlType>().is_err(), "{text}");
    }
    assert!(SqlType::numeric(39, 0).is_err());
    assert!(SqlType::numeric(38, 38).is_ok());
    assert!(SqlType::varchar(0).is_err());
}

#[test]
fn from_oid_typmod_rejects_unknown_and_unmodified() {
    assert!(SqlType::from_oid_typmod(oid::UUID, -1).is_err());
    assert!(SqlType::from_oid_typmod(oid::NUMERIC, -1).is_err());
    assert!(SqlType::from_oid_typmod(oid::VARCHAR, -1).is_err());
    assert!(SqlType::from_oid_typmod(oid::BPCHAR, 4).is_err());
    // precision 39 encoded in the modifier
    assert!(SqlType::from_oid_typmod(oid::NUMERIC, (39 << 16) + 4).is_err());
}

#[test]
fn widths_and_versions() {
    assert_eq!(
        SqlType::Numeric {
            precision: 18,
            scale: 0
        }
        .fixed_width(),
        Some(8)
    );
    assert_eq!(
        SqlType::Numeric {
            precision: 19,
            scale: 0
        }
        .fixed_width(),
        Some(16)
    );
    assert_eq!(SqlType::Interval.fixed_width(), Some(16));
    assert_eq!(SqlType::Time.fixed_width(), Some(8));
    assert_eq!(SqlType::Char(1).fixed_width(), None);
    assert_eq!(SqlType::Real.min_database_version(), Some(4));
    assert_eq!(
        SqlType::Numeric {
            precision: 19,
            scale: 2
        }
        .min_database_version(),
        Some(3)
    );
    assert_eq!(
        SqlType::Numeric {
            precision: 18,
            scale: 2
        }
        .min_database_version(),
        None
    );
}

#[test]
fn column_type_renders_nullability() {
    assert_eq!(
        ColumnType::not_null(SqlType::Int).to_string(),
        "INTEGER NOT NULL"
    );
    assert_eq!(ColumnType::from(SqlType::Text).to_string(), "TEXT");
    assert!(ColumnType::from(SqlType::Text).is_nullable());
}

#[test]
fn fit_text_counts_characters_and_drops_only_chars_padding() {
    let (v3, c3, c1) = (SqlType::Varchar(3), SqlType::Char(3), SqlType::Char(1));
    // At most n characters, however many bytes.
    assert_eq!(v3.fit_text("abc"), Ok("abc"));
    assert_eq!(v3.fit_text("日本語"), Ok("日本語"));
    assert_eq!(c1.fit_text("é"), Ok("é"));
    assert_eq!(v3.fit_text(""), Ok(""));
    // Longer: refused with the character count...
    assert_eq!(v3.fit_text("abcd"), Err(4));
    assert_eq!(c1.fit_text("éé"), Err(2));
    assert_eq!(v3.fit_text("日本語 "), Err(4));
    // ...except spaces past CHAR(n)'s n-th character, which are dropped.
    assert_eq!(c3.fit_text("abc   "), Ok("abc"));
    assert_eq!(c3.fit_text("日本語  "), Ok("日本語"));
    assert_eq!(c3.fit_text("a     "), Ok("a  "));
    assert_eq!(c3.fit_text("abc  x"), Err(6));
    assert_eq!(c3.fit_text("abc\t"), Err(4));
    assert_eq!(c3.fit_text("abc\u{3000}"), Err(4));
    assert_eq!(v3.fit_text("ab    "), Err(6));
    // Other types take the value as it is.
    assert_eq!(SqlType::Text.fit_text("abcd"), Ok("abcd"));
}

//! Files written by this crate, read back by Tableau's own Hyper API (the
//! `tableauhyperapi` Python package, installed by `make test` through
//! `scripts/install-interop.sh`): the file format and every value must be
//! what Tableau itself sees.

use std::path::{Path, PathBuf};
use std::process::Command;

use hyperdb_api::{Connection, CreateMode, Inserter};

use crate::common::{server, temp_dir};
use crate::insert::{all_types_table, rows, values};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `scripts/read_hyper.py` on `file`; returns its JSON output.
fn read_with_tableau(file: &Path, table: &str) -> String {
    let root = repo_root();
    let pylib = root.join(".hyperd/pylib");
    assert!(
        pylib.join(".installed").exists(),
        "Tableau's Hyper API is missing: run `make test` (or scripts/install-interop.sh)"
    );
    let logs = temp_dir();
    let out = Command::new("python3")
        .arg(root.join("scripts/read_hyper.py"))
        .arg(file)
        .arg(table)
        .arg(logs.path())
        .env("PYTHONPATH", &pylib)
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "read_hyper.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn tableau_reads_every_type_exactly() {
    let dir = temp_dir();
    let file = dir.path().join("interop.hyper");
    let mut c = Connection::connect(server().endpoint(), &file, CreateMode::Create).unwrap();
    let table = all_types_table();
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();
    let mut ins = Inserter::new(&mut c, &table).unwrap();
    for r in &rows() {
        ins.add_row(&values(r)).unwrap();
    }
    ins.execute().unwrap();
    c.close().unwrap();

    // What Tableau's API returns, rendered by its Python types: NUMERIC as
    // Python Decimal (so -0.500 prints as -0.5), intervals in ISO 8601.
    let expected = concat!(
        r#"{"columns": ["id", "b", "s", "i", "bi", "r", "d", "o", "n18", "n38", "t", "vc", "c5", "c1", "j", "by", "date", "time", "ts", "tstz", "iv"], "rows": ["#,
        r#"["1", "False", "-32768", "-2147483648", "-9223372036854775808", "-inf", "nan", "0", "-999999999999999.999", "-9999999999999999999999999999.9999999999", "", "\u65e5\u672c\u8a9e", "abcde", "x", "{\"a\":[1,2]}", "hex:", "1066-10-14", "00:00:00", "1850-03-04 05:06:07.123456", "1899-12-31 23:59:59.999999+00:00", "P-1Y-2M3DT-2M-3.456789S"], "#,
        r#"["2", "True", "32767", "2147483647", "9223372036854775807", "nan", "inf", "4294967295", "-0.5", "-1E-10", "h\u00e9llo w\u00f6rld \u2713 \ud83c\udf89 \"quoted\" 'single' \\ back", "0123456789", "\u00fc\u2713\u20acab", "\u00e9", "[]", "hex:00ff01025c", "9999-12-31", "23:59:59.999999", "2200-01-01 00:00:00.000001", "2101-01-01 12:00:00+00:00", "P100Y-30DT23H59M59.999999S"], "#,
        r#"["3", null, null, null, null, "-0.5", "-0.25", null, "999999999999999.999", "9999999999999999999999999999.9999999999", null, null, null, null, null, null, null, null, null, null, null], "#,
        r#"["4", null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null]]}"#,
    );
    assert_eq!(read_with_tableau(&file, "all_types").trim_end(), expected);
}

#[test]
fn tableau_reads_a_version_2_file() {
    // The format Tableau 2020.4.15+ opens: no NUMERIC(38) or REAL, so a
    // table without them.
    let hyper = hyperdb_api::HyperProcess::new(
        hyperdb_api::HyperProcessOptions::default().with_default_database_version(2),
    )
    .unwrap();
    let dir = temp_dir();
    let file = dir.path().join("v2.hyper");
    let mut c = Connection::connect(hyper.endpoint(), &file, CreateMode::Create).unwrap();
    let table = hyperdb_api::TableDefinition::new("t")
        .with_not_null_column("id", hyperdb_api::types::SqlType::Int)
        .with_column("name", hyperdb_api::types::SqlType::Text);
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();
    let mut ins = Inserter::new(&mut c, &table).unwrap();
    ins.add_row(&[&1i32, &Some("one")]).unwrap();
    ins.add_row(&[&2i32, &None::<&str>]).unwrap();
    ins.execute().unwrap();
    c.close().unwrap();
    assert_eq!(
        read_with_tableau(&file, "t").trim_end(),
        r#"{"columns": ["id", "name"], "rows": [["1", "one"], ["2", null]]}"#
    );
}

//! Files written by this crate, read back by Tableau's own Hyper API (the
//! `tableauhyperapi` Python package, installed by `make test` through
//! `scripts/install-interop.sh`): the file format and every value must be
//! what Tableau itself sees.

use std::path::{Path, PathBuf};
use std::process::Command;

use hyperdb_api::{
    ArrowInserter, ChunkSender, Connection, CreateMode, InsertChunk, InsertFormat, Inserter,
    TableDefinition,
};

use crate::arrow::geography;
use crate::common::{server, temp_dir};
use crate::insert::{all_types_table, read, rows, same, values, AllTypes};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `scripts/read_hyper.py` on `file`; returns its JSON output.
fn read_with_tableau(file: &Path, table: &str) -> String {
    tableau_script("read_hyper.py", &[file.as_os_str(), table.as_ref()])
}

/// Runs `scripts/<script>` with `args` and a log directory through
/// Tableau's own Hyper API; its standard output.
fn tableau_script(script: &str, args: &[&std::ffi::OsStr]) -> String {
    let root = repo_root();
    let pylib = root.join(".hyperd/pylib");
    assert!(
        pylib.join(".installed").exists(),
        "Tableau's Hyper API is missing: run `make test` (or scripts/install-interop.sh)"
    );
    let logs = temp_dir();
    let out = Command::new("python3")
        .arg(root.join("scripts").join(script))
        .args(args)
        .arg(logs.path())
        .env("PYTHONPATH", &pylib)
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The other direction: a file Tableau's API wrote (its catalog made the
/// table, its `Inserter` the values; `scripts/write_hyper.py`) reads back
/// through this crate as the rows Tableau was given, value by value, on
/// both read routes, and its catalog entry is the definition this crate
/// writes for the same table.
#[test]
fn tableau_written_files_read_exactly() {
    let dir = temp_dir();
    let file = dir.path().join("tableau.hyper");
    assert_eq!(
        tableau_script("write_hyper.py", &[file.as_os_str()]).trim_end(),
        "ok"
    );
    let mut c = Connection::connect(server().endpoint(), &file, CreateMode::DoNotCreate).unwrap();
    let theirs = hyperdb_api::Catalog::new(&mut c)
        .get_table_definition("all_types")
        .unwrap();
    assert_eq!(theirs.columns(), all_types_table().columns());
    let want = rows();
    let sql = "SELECT * FROM all_types ORDER BY id";
    // Twice each: a first run and a repeat may take different routes.
    for params in [false, true] {
        for run in 0..2 {
            let rows = if params {
                c.execute_query_params(sql, &[]).unwrap()
            } else {
                c.execute_query(sql).unwrap()
            };
            let got: Vec<AllTypes> = rows.map(|r| read(&r.unwrap())).collect();
            assert_eq!(got.len(), want.len(), "params {params}, run {run}");
            for (g, w) in got.iter().zip(&want) {
                assert!(same(g, w), "params {params}, run {run}:\n{g:?}\n!=\n{w:?}");
            }
        }
    }
}

/// The same rows written by every row and chunk writer: the default
/// `Inserter` (Arrow), the `Inserter` sending HyperBinary, `ChunkSender`
/// (HyperBinary chunks), and `ArrowInserter` given the batches
/// `query_arrow` reads back. Tableau's API must read each file as the one
/// expected file.
#[test]
fn tableau_reads_every_type_exactly() {
    // What Tableau's API returns, rendered by its Python types: NUMERIC as
    // Python Decimal (so -0.500 prints as -0.5), intervals in ISO 8601.
    // The Node package's interop test expects the same file.
    let expected =
        std::fs::read_to_string(repo_root().join("scripts/interop_all_types.json")).unwrap();
    let table = all_types_table();
    let writers: [(&str, Writer); 4] = [
        ("Inserter", |c, t| write_rows(c, t, InsertFormat::default())),
        ("Inserter (HyperBinary)", |c, t| {
            write_rows(c, t, InsertFormat::HyperBinary)
        }),
        ("ChunkSender", |c, t| {
            let mut chunk = InsertChunk::new(t).unwrap();
            for r in &rows() {
                chunk.add_row(&values(r)).unwrap();
            }
            let mut sender = ChunkSender::new(c, t).unwrap();
            sender.send(&mut chunk).unwrap();
            assert_eq!(sender.execute().unwrap(), 4);
        }),
        ("ArrowInserter (batches read by query_arrow)", |c, t| {
            let mut staged = TableDefinition::new("staged");
            for column in t.columns() {
                staged.add_column(column.clone());
            }
            c.execute_command(&staged.create_table_sql(false).unwrap())
                .unwrap();
            write_rows(c, &staged, InsertFormat::default());
            let batches: Vec<_> = c
                .query_arrow("SELECT * FROM staged ORDER BY id")
                .unwrap()
                .collect::<hyperdb_api::Result<_>>()
                .unwrap();
            let mut ins = ArrowInserter::new(c, t).unwrap();
            for b in &batches {
                ins.insert_batch(b).unwrap();
            }
            assert_eq!(ins.finish().unwrap(), 4);
        }),
    ];
    let dir = temp_dir();
    for (i, (name, write)) in writers.iter().enumerate() {
        let file = dir.path().join(format!("interop-{i}.hyper"));
        let mut c = Connection::connect(server().endpoint(), &file, CreateMode::Create).unwrap();
        c.execute_command(&table.create_table_sql(false).unwrap())
            .unwrap();
        write(&mut c, &table);
        c.close().unwrap();
        assert_eq!(
            read_with_tableau(&file, "all_types").trim_end(),
            expected.trim_end(),
            "{name}"
        );
    }
}

/// Writes the all-types rows into a table of that definition.
type Writer = fn(&mut Connection, &TableDefinition);

fn write_rows(c: &mut Connection, table: &TableDefinition, format: InsertFormat) {
    let mut ins = Inserter::with_format(c, table, format).unwrap();
    for r in &rows() {
        ins.add_row(&values(r)).unwrap();
    }
    assert_eq!(ins.execute().unwrap(), 4);
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

/// SQL whose answer depends on session and server defaults: text rendering
/// of floats, two-digit years, the strictness of date parsing. Each returns
/// one text value (or fails).
const DEFAULT_SENSITIVE: &[&str] = &[
    "SELECT (0.1::DOUBLE PRECISION + 0.2::DOUBLE PRECISION)::TEXT",
    "SELECT (1e300::DOUBLE PRECISION / 7)::TEXT",
    "SELECT (1::REAL / 3)::TEXT",
    "SELECT 16777217::REAL::TEXT",
    "SELECT 123456789.123456789::DOUBLE PRECISION::TEXT",
    "SELECT 5e-324::DOUBLE PRECISION::TEXT",
    "SELECT (-0.0)::DOUBLE PRECISION::TEXT",
    "SELECT 'NaN'::DOUBLE PRECISION::TEXT",
    "SELECT '01/02/50'::DATE::TEXT",
    "SELECT '01/02/40'::DATE::TEXT",
    "SELECT '01/02/39'::DATE::TEXT",
    "SELECT '01/02/69 10:00 PM'::TIMESTAMP::TEXT",
    "SELECT '-1-01-01'::DATE::TEXT",
    "SELECT '2020/1/2'::DATE::TEXT",
    "SELECT '2020-01-02 BC'::DATE::TEXT",
    "SELECT '13/02/2020'::DATE::TEXT",
    "SELECT 'Jan 2, 2020'::DATE::TEXT",
    "SELECT '2020-01-02T03:04:05.123456'::TIMESTAMP::TEXT",
    "SELECT '2020-01-02 03:04:05+02'::TIMESTAMPTZ::TEXT",
    "SELECT INTERVAL '1 year 2 months 3 days 04:05:06.7'::TEXT",
    "SELECT 12345678901234567890.123::NUMERIC(38,3)::TEXT",
];

#[test]
fn the_same_sql_gives_what_tableau_gives() {
    let root = repo_root();
    let logs = temp_dir();
    let mut child = Command::new("python3")
        .arg(root.join("scripts/query_hyper.py"))
        .arg(logs.path())
        .env("PYTHONPATH", root.join(".hyperd/pylib"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running python3");
    let input = serde_json::to_vec(DEFAULT_SENSITIVE).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "query_hyper.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<(String, Option<String>)> = serde_json::from_slice(&out.stdout).unwrap();

    // A server and connection with every default, as a user gets them.
    let hyper = hyperdb_api::HyperProcess::start().unwrap();
    let mut c = Connection::connect(
        hyper.endpoint(),
        temp_dir().path().join("d.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    for (sql, (kind, value)) in DEFAULT_SENSITIVE.iter().zip(&theirs) {
        let ours = c.query_scalar::<String>(sql);
        match (kind.as_str(), &ours) {
            ("ok", Ok(v)) => assert_eq!(Some(v), value.as_ref(), "{sql}"),
            ("error", Err(e)) => assert_eq!(crate::common::code(e), "22P02", "{sql}: {e}"),
            _ => panic!("{sql}: Tableau's API gave {kind} {value:?}, ours {ours:?}"),
        }
    }
    // Not vacuous: Tableau's answers include the ones hyperd's own defaults
    // would change.
    assert!(theirs.contains(&("ok".into(), Some("0.30000000000000004".into()))));
    assert!(theirs.contains(&("ok".into(), Some("1950-01-02".into()))));
    let strict = DEFAULT_SENSITIVE
        .iter()
        .position(|s| s.contains("'-1-01-01'"));
    assert_eq!(theirs[strict.unwrap()].0, "error");
}

#[test]
fn the_callers_settings_win_over_the_defaults() {
    let hyper = hyperdb_api::HyperProcess::new(
        hyperdb_api::HyperProcessOptions::default().with_param("date_style_lenient", "true"),
    )
    .unwrap();
    let options = hyper
        .connect_options()
        .with_param("two_digit_year_threshold", "70")
        .with_param("extra_float_digits", "0");
    let mut c = Connection::connect_with(&options).unwrap();
    let text = |c: &mut Connection, sql: &str| c.query_scalar::<String>(sql).unwrap();
    assert_eq!(text(&mut c, "SELECT '01/02/50'::DATE::TEXT"), "2050-01-02");
    assert_eq!(
        text(
            &mut c,
            "SELECT (0.1::DOUBLE PRECISION + 0.2::DOUBLE PRECISION)::TEXT"
        ),
        "0.3"
    );
    assert_eq!(text(&mut c, "SELECT '2020/1/2'::DATE::TEXT"), "2020-01-02");
}

/// A CHAR(n) value longer than n only by trailing spaces is stored cut to n
/// characters, as Tableau's own inserter stores it (measured: `'abc   '`
/// into CHAR(3) reads back `abc` there); VARCHAR(n) keeps its spaces, so
/// there the same value is refused, as Tableau's inserter refuses it.
#[test]
fn char_values_are_cut_to_n_as_tableau_cuts_them() {
    use hyperdb_api::arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
    use hyperdb_api::types::SqlType;
    use hyperdb_api::{ArrowInserter, InsertFormat, TableDefinition};
    use std::sync::Arc;

    let table = TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("c", SqlType::Char(3))
        .with_column("v", SqlType::Varchar(3));
    let dir = temp_dir();
    let file = dir.path().join("chars.hyper");
    let mut c = Connection::connect(server().endpoint(), &file, CreateMode::Create).unwrap();
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();
    let mut id = 0;
    for format in [InsertFormat::ArrowStream, InsertFormat::HyperBinary] {
        let mut ins = Inserter::with_format(&mut c, &table, format).unwrap();
        for (ch, v) in [("abc   ", "ab "), ("日本語 ", "a"), ("a     ", "   ")] {
            ins.add_row(&[&id, &ch, &v]).unwrap();
            id += 1;
        }
        let e = ins.add_row(&[&id, &"a", &"ab    "]).unwrap_err();
        assert_eq!(e.sqlstate(), "22001", "{e}");
        let e = ins.add_row(&[&id, &"abc  x", &"a"]).unwrap_err();
        assert!(e.to_string().contains("6 characters"), "{e}");
        assert_eq!(ins.execute().unwrap(), 3);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![id])),
        Arc::new(StringArray::from(vec!["xyz  "])),
        Arc::new(StringArray::from(vec!["x"])),
    ];
    let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&table).unwrap());
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut ins = ArrowInserter::new(&mut c, &table).unwrap();
    ins.insert_batch(&batch).unwrap();
    assert_eq!(ins.finish().unwrap(), 1);
    // Raw IPC bytes into a table with CHAR/VARCHAR columns are decoded and
    // checked the same way (passed through, hyperd would store "abcd").
    let ipc = |c: &str, v: &str| {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![id + 1])),
            Arc::new(StringArray::from(vec![c])),
            Arc::new(StringArray::from(vec![v])),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let mut out = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        drop(w);
        out
    };
    let mut ins = ArrowInserter::new(&mut c, &table).unwrap();
    let e = ins.insert_ipc(&ipc("abcd", "x")).unwrap_err();
    assert_eq!(e.sqlstate(), "22001", "{e}");
    ins.insert_ipc(&ipc("pq     ", "pq ")).unwrap();
    assert_eq!(ins.finish().unwrap(), 1);
    c.close().unwrap();

    let rows = [
        r#"["0", "abc", "ab "]"#,
        r#"["1", "\u65e5\u672c\u8a9e", "a"]"#,
        r#"["2", "a  ", "   "]"#,
        r#"["3", "abc", "ab "]"#,
        r#"["4", "\u65e5\u672c\u8a9e", "a"]"#,
        r#"["5", "a  ", "   "]"#,
        r#"["6", "xyz", "x"]"#,
        r#"["7", "pq ", "pq "]"#,
    ];
    assert_eq!(
        read_with_tableau(&file, "t").trim_end(),
        format!(
            r#"{{"columns": ["id", "c", "v"], "rows": [{}]}}"#,
            rows.join(", ")
        )
    );
}

/// GEOGRAPHY in Hyper's own encoding, written from WKT through
/// `MappedInserter` and from its bytes through `ArrowInserter`: Tableau's
/// API reads both byte for byte as hyperd's own cast makes them.
#[test]
fn tableau_reads_geography_as_hyper_encodes_it() {
    use hyperdb_api::arrow_array::{ArrayRef, BinaryArray, Int32Array, RecordBatch};
    use hyperdb_api::types::SqlType;
    use hyperdb_api::{ArrowInserter, ColumnMapping, MappedInserter, TableDefinition};
    use std::sync::Arc;

    let wkt = [
        "POINT(1 2)",
        "LINESTRING(-122.5 37.7, -73.9 40.7)",
        "POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))",
    ];
    let dir = temp_dir();
    let file = dir.path().join("geography.hyper");
    let mut c = Connection::connect(server().endpoint(), &file, CreateMode::Create).unwrap();
    let encoded: Vec<Vec<u8>> = wkt.iter().map(|w| geography(&mut c, w)).collect();
    let table = TableDefinition::new("geo")
        .with_not_null_column("id", SqlType::Int)
        .with_column("g", SqlType::Geography);
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();

    let inputs = TableDefinition::new("in")
        .with_not_null_column("id", SqlType::Int)
        .with_column("wkt", SqlType::Text);
    let mappings = [
        ColumnMapping::column("id"),
        ColumnMapping::expression("g", "CAST(\"wkt\" AS TABLEAU.TABGEOGRAPHY)"),
    ];
    let mut ins = MappedInserter::new(&mut c, "geo", &inputs, &mappings).unwrap();
    for (id, w) in (0i32..).zip(wkt) {
        ins.add_row(&[&id, &Some(w)]).unwrap();
    }
    ins.add_row(&[&3i32, &None::<&str>]).unwrap();
    assert_eq!(ins.execute().unwrap(), 4);

    let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&table).unwrap());
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![10, 11, 12])),
        Arc::new(BinaryArray::from_iter_values(&encoded)),
    ];
    let mut ins = ArrowInserter::new(&mut c, &table).unwrap();
    ins.insert_batch(&RecordBatch::try_new(schema, columns).unwrap())
        .unwrap();
    assert_eq!(ins.finish().unwrap(), 3);
    c.close().unwrap();

    let hex = |b: &[u8]| {
        let digits: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!("\"hex:{digits}\"")
    };
    let mut rows: Vec<String> = (0..3)
        .map(|i| format!("[\"{i}\", {}]", hex(&encoded[i])))
        .collect();
    rows.push(r#"["3", null]"#.into());
    rows.extend((0..3).map(|i| format!("[\"{}\", {}]", 10 + i, hex(&encoded[i]))));
    assert_eq!(
        read_with_tableau(&file, "geo").trim_end(),
        format!(
            r#"{{"columns": ["id", "g"], "rows": [{}]}}"#,
            rows.join(", ")
        )
    );
}

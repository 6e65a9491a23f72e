//! The inserters' table check reads the table's definition from the Arrow
//! schema of `SELECT * FROM t LIMIT 0` (hyperd's `hyper:*` field metadata
//! tells CHAR, VARCHAR, JSON, OID and GEOGRAPHY apart): for every type,
//! nullable and NOT NULL, the check must see exactly what the catalog
//! holds. The table's own definition is accepted, and one that differs in
//! a single column's type or nullability is refused, naming that column.

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    AsyncConnection, AsyncInserter, ColumnDefinition, Connection, Error, Inserter, TableDefinition,
    TransactionStatus,
};

use crate::common::{connect, connect_async, temp_dir};

/// Every type, each with a type it must not be taken for.
fn types() -> Vec<(SqlType, SqlType)> {
    let numeric = |p, s| SqlType::numeric(p, s).unwrap();
    vec![
        (SqlType::Bool, SqlType::SmallInt),
        (SqlType::SmallInt, SqlType::Int),
        (SqlType::Int, SqlType::BigInt),
        (SqlType::BigInt, SqlType::Int),
        (SqlType::Real, SqlType::Double),
        (SqlType::Double, SqlType::Real),
        (SqlType::Oid, SqlType::BigInt),
        (numeric(18, 3), numeric(18, 2)),
        (numeric(38, 10), numeric(37, 10)),
        (SqlType::Text, SqlType::varchar(5).unwrap()),
        (SqlType::varchar(5).unwrap(), SqlType::varchar(6).unwrap()),
        (SqlType::char(5).unwrap(), SqlType::varchar(5).unwrap()),
        (SqlType::Char(1), SqlType::char(2).unwrap()),
        (SqlType::Json, SqlType::Text),
        (SqlType::Bytea, SqlType::Geography),
        (SqlType::Geography, SqlType::Bytea),
        (SqlType::Date, SqlType::Timestamp),
        (SqlType::Time, SqlType::Interval),
        (SqlType::Timestamp, SqlType::TimestampTz),
        (SqlType::TimestampTz, SqlType::Timestamp),
        (SqlType::Interval, SqlType::Time),
    ]
}

/// A table with a nullable and a NOT NULL column of every type, as made.
fn every_type() -> TableDefinition {
    let mut def = TableDefinition::new("every");
    for (i, (ty, _)) in types().into_iter().enumerate() {
        def = def
            .with_column(format!("n{i}"), ty)
            .with_not_null_column(format!("r{i}"), ty);
    }
    def
}

/// `def` with column `at` replaced by `column`.
fn with_column_at(def: &TableDefinition, at: usize, column: ColumnDefinition) -> TableDefinition {
    let mut changed = TableDefinition::new(def.name().clone());
    for (i, c) in def.columns().iter().enumerate() {
        changed.add_column(if i == at { column.clone() } else { c.clone() });
    }
    changed
}

/// Definitions of `every` that differ from it in one column each: its
/// nullability flipped, or its type swapped for a near one; with what the
/// refusal must name (the column).
fn near_misses(def: &TableDefinition) -> Vec<(String, TableDefinition)> {
    let mut out = Vec::new();
    for (at, column) in def.columns().iter().enumerate() {
        let (_, other) = types()[at / 2];
        let flipped = if column.is_nullable() {
            ColumnDefinition::not_null(column.name(), *column.sql_type())
        } else {
            ColumnDefinition::nullable(column.name(), *column.sql_type())
        };
        out.push((column.name().to_owned(), with_column_at(def, at, flipped)));
        let retyped = if column.is_nullable() {
            ColumnDefinition::nullable(column.name(), other)
        } else {
            ColumnDefinition::not_null(column.name(), other)
        };
        out.push((column.name().to_owned(), with_column_at(def, at, retyped)));
    }
    out
}

fn assert_refused_at(column: &str, e: &Error) {
    match e {
        Error::DefinitionMismatch { column: at, .. } => {
            assert_eq!(at.as_deref(), Some(column), "{e}");
            assert_eq!(e.column(), Some(column), "{e}");
        }
        other => panic!("column {column}: not DefinitionMismatch: {other:?}"),
    }
}

#[test]
fn the_check_sees_every_type_as_the_catalog_does() {
    let dir = temp_dir();
    let mut c: Connection = connect(&dir, "check_types.hyper");
    let def = every_type();
    c.execute_command(&def.create_table_sql(false).unwrap())
        .unwrap();
    let ins = Inserter::new(&mut c, &def).unwrap();
    assert_eq!(ins.execute().unwrap(), 0);
    // The catalog's own definition (collations included, which the check
    // does not compare) is accepted too. Read after the insert, so that
    // the next one is no repeat of it and runs the check (`copy_tx.rs`).
    let catalog = c.catalog().get_table_definition("every").unwrap();
    assert_eq!(catalog.column_count(), def.column_count());
    let ins = Inserter::new(&mut c, &catalog).unwrap();
    assert_eq!(ins.execute().unwrap(), 0);
    for (column, wrong) in near_misses(&def) {
        let e = Inserter::new(&mut c, &wrong).unwrap_err();
        assert_refused_at(&column, &e);
    }
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM every").unwrap(),
        0
    );
}

#[tokio::test]
async fn the_async_check_sees_every_type_too() {
    let dir = temp_dir();
    let mut c: AsyncConnection = connect_async(&dir, "check_types_async.hyper").await;
    let def = every_type();
    c.execute_command(&def.create_table_sql(false).unwrap())
        .await
        .unwrap();
    let ins = AsyncInserter::new(&mut c, &def).await.unwrap();
    assert_eq!(ins.execute().await.unwrap(), 0);
    for (column, wrong) in near_misses(&def) {
        let e = AsyncInserter::new(&mut c, &wrong).await.unwrap_err();
        assert_refused_at(&column, &e);
    }
    let n: i64 = c.query_scalar("SELECT count(*) FROM every").await.unwrap();
    assert_eq!(n, 0);
}

/// A table with a column of a type hyperd gives no Arrow form for (UUID)
/// and this client has no type for: the check says so, naming the table
/// and the type; the table is unchanged and the connection usable. The
/// catalog's description of the table fails alike, naming the column.
#[test]
fn a_table_with_a_type_the_client_lacks_is_refused_clearly() {
    let dir = temp_dir();
    let mut c: Connection = connect(&dir, "check_uuid.hyper");
    c.execute_command("CREATE TABLE u (id INT, x UUID)")
        .unwrap();
    let def = TableDefinition::new("u")
        .with_column("id", SqlType::Int)
        .with_column("x", SqlType::Text);
    let e = Inserter::new(&mut c, &def).unwrap_err();
    assert_eq!(e.sqlstate(), "0A000");
    let message = e.to_string();
    assert!(
        message.contains("table \"u\" has a column of type uuid"),
        "{e}"
    );
    // hyperd names no column, and neither does the error.
    assert_eq!(e.column(), None, "{e}");
    let hint = e.db_error().and_then(|db| db.hint.as_deref()).unwrap();
    assert!(hint.contains("parameterized INSERT"), "{hint}");
    // The catalog, which reads the column's type itself, names the column.
    let e = c.catalog().get_table_definition("u").unwrap_err();
    assert_eq!(e.sqlstate(), "0A000", "{e}");
    assert_eq!(e.column(), Some("x"), "{e}");
    assert!(e.to_string().contains("uuid is not supported"), "{e}");
    assert_eq!(c.transaction_status(), TransactionStatus::Idle);
    assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM u").unwrap(), 0);
}

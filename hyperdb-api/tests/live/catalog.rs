//! Catalog: schemas, tables, definitions read back from pg_catalog, weird
//! names, databases and errors; sync and async.

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    AsyncCatalog, AsyncConnection, Catalog, ColumnDefinition, Connection, CreateMode, DatabaseName,
    Error, Persistence, SchemaName, TableDefinition, TableName, TransactionStatus,
};

use crate::common::{server, temp_dir};

fn every_type(name: impl Into<TableName>) -> TableDefinition {
    let num = |p, s| SqlType::numeric(p, s).unwrap();
    TableDefinition::new(name)
        .with_not_null_column("bool", SqlType::Bool)
        .with_column("smallint", SqlType::SmallInt)
        .with_not_null_column("int", SqlType::Int)
        .with_column("bigint", SqlType::BigInt)
        .with_column("real", SqlType::Real)
        .with_not_null_column("double", SqlType::Double)
        .with_column("oid", SqlType::Oid)
        .with_not_null_column("numeric(18,3)", num(18, 3))
        .with_column("numeric(38,10)", num(38, 10))
        .with_column("text", SqlType::Text)
        .with_column_definition(
            ColumnDefinition::not_null("text ci", SqlType::Text).with_collation("en_US_CI"),
        )
        .with_column_definition(
            ColumnDefinition::nullable("text C", SqlType::Text).with_collation("C"),
        )
        .with_column("varchar(10)", SqlType::Varchar(10))
        .with_column_definition(
            ColumnDefinition::nullable("varchar de", SqlType::Varchar(10)).with_collation("de_DE"),
        )
        .with_not_null_column("char(5)", SqlType::Char(5))
        .with_column_definition(
            ColumnDefinition::nullable("char ci", SqlType::Char(5)).with_collation("en_US_CI"),
        )
        .with_column("char(1)", SqlType::Char(1))
        .with_column("json", SqlType::Json)
        .with_column("bytea", SqlType::Bytea)
        .with_not_null_column("date", SqlType::Date)
        .with_column("time", SqlType::Time)
        .with_column("timestamp", SqlType::Timestamp)
        .with_column("timestamptz", SqlType::TimestampTz)
        .with_column("interval", SqlType::Interval)
        .with_not_null_column("geography", SqlType::Geography)
}

fn code(e: &Error) -> Option<&str> {
    e.code().map(|c| c.code())
}

#[test]
fn every_type_round_trips_sync() {
    let dir = temp_dir();
    let ep = server().endpoint();
    let mut conn =
        Connection::connect(ep, dir.path().join("types.hyper"), CreateMode::Create).unwrap();
    let mut cat = Catalog::new(&mut conn);
    cat.create_schema("types").unwrap();
    let def = every_type(("types", "every type"));
    cat.create_table(&def).unwrap();
    // Named in full, as Tableau's Hyper API names it.
    assert_eq!(
        cat.get_table_definition(def.name()).unwrap(),
        every_type(("types", "types", "every type"))
    );

    // The same in a second attached database, named with spaces.
    let other = dir.path().join("other db.hyper");
    cat.create_database(&other).unwrap();
    cat.attach_database(&other, "other db").unwrap();
    let qualified = every_type(("other db", "public", "t"));
    cat.create_table(&qualified).unwrap();
    assert_eq!(
        cat.get_table_definition(qualified.name()).unwrap(),
        qualified
    );
    assert!(cat.has_table(("other db", "public", "t")).unwrap());
    assert!(!cat.has_table(("other db", "types", "every type")).unwrap());
    cat.detach_database("other db").unwrap();
    cat.drop_database(&other).unwrap();
    assert!(!other.exists());
}

#[tokio::test]
async fn every_type_round_trips_async() {
    let dir = temp_dir();
    let ep = server().endpoint();
    let mut conn = AsyncConnection::connect(ep, dir.path().join("a.hyper"), CreateMode::Create)
        .await
        .unwrap();
    let mut cat = AsyncCatalog::new(&mut conn);
    let def = every_type("t");
    cat.create_table(&def).await.unwrap();
    assert_eq!(
        cat.get_table_definition("t").await.unwrap(),
        every_type(("a", "public", "t"))
    );
    // Unqualified means `public` in the only attached database.
    assert_eq!(
        cat.get_table_definition(("public", "t"))
            .await
            .unwrap()
            .columns(),
        def.columns()
    );
}

/// A bare name is looked up as a statement resolves it, as Tableau's Hyper
/// API looks it up: a temporary table first (`"pg_temp"."t"`,
/// `Persistence::Temporary`), then the search path; a qualified name where
/// it says. Definitions come back named in full.
#[test]
fn bare_names_resolve_as_statements_do() {
    let dir = temp_dir();
    let mut conn = Connection::connect(
        server().endpoint(),
        dir.path().join("r.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    let mut cat = Catalog::new(&mut conn);
    cat.create_table(&TableDefinition::new("t").with_column("a", SqlType::Int))
        .unwrap();
    let tmp = TableDefinition::new("tmp")
        .with_not_null_column("c", SqlType::Text)
        .with_persistence(Persistence::Temporary);
    cat.create_table(&tmp).unwrap();
    assert!(cat.has_table("tmp").unwrap());
    assert!(!cat.has_table(("public", "tmp")).unwrap());
    let got = cat.get_table_definition("tmp").unwrap();
    assert_eq!(got.name(), &TableName::from(("pg_temp", "tmp")));
    assert_eq!(got.persistence(), Persistence::Temporary);
    assert_eq!(got.columns(), tmp.columns());

    // A temporary table hides `public`'s of the same name, as in a statement.
    cat.create_table(
        &TableDefinition::new("t")
            .with_column("z", SqlType::BigInt)
            .with_persistence(Persistence::Temporary),
    )
    .unwrap();
    let got = cat.get_table_definition("t").unwrap();
    assert_eq!(got.name(), &TableName::from(("pg_temp", "t")));
    assert_eq!(got.columns()[0].name(), "z");
    let public = cat.get_table_definition(("public", "t")).unwrap();
    assert_eq!(public.name(), &TableName::from(("r", "public", "t")));
    assert_eq!(public.persistence(), Persistence::Permanent);
    assert_eq!(
        cat.get_table_names("pg_temp").unwrap(),
        vec![
            TableName::from(("pg_temp", "t")),
            TableName::from(("pg_temp", "tmp"))
        ]
    );
    // copy_table copies the table a bare name resolves to.
    conn.execute_command("INSERT INTO t VALUES (7)").unwrap();
    let mut cat = Catalog::new(&mut conn);
    assert_eq!(cat.copy_table("t", ("public", "copy")).unwrap(), 1);
    let copy = cat.get_table_definition("copy").unwrap();
    assert_eq!(copy.persistence(), Persistence::Permanent);
    assert_eq!(copy.columns()[0].name(), "z");

    // The search path counts; `pg_temp` stays first.
    cat.create_schema("s").unwrap();
    cat.create_table(&TableDefinition::new(("s", "u")).with_column("a", SqlType::Int))
        .unwrap();
    assert!(!cat.has_table("u").unwrap());
    conn.execute_command("SET search_path = s").unwrap();
    let mut cat = Catalog::new(&mut conn);
    assert!(cat.has_table("u").unwrap());
    assert_eq!(
        cat.get_table_definition("u").unwrap().name(),
        &TableName::from(("r", "s", "u"))
    );
    assert!(
        !cat.has_table("copy").unwrap(),
        "public is off the path now"
    );
    assert_eq!(
        code(&cat.get_table_definition("copy").unwrap_err()),
        Some("42P01")
    );
    assert_eq!(
        cat.get_table_definition("tmp").unwrap().persistence(),
        Persistence::Temporary
    );
}

#[test]
fn collation_names_come_back_canonical() {
    let dir = temp_dir();
    let mut conn = Connection::connect(
        server().endpoint(),
        dir.path().join("c.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    let mut cat = Catalog::new(&mut conn);
    let def = TableDefinition::new("t").with_column_definition(
        ColumnDefinition::nullable("a", SqlType::Text).with_collation("en_us_ci"),
    );
    cat.create_table(&def).unwrap();
    let back = cat.get_table_definition("t").unwrap();
    assert_eq!(back.columns()[0].collation(), Some("en_US_CI"));
    let e = cat
        .create_table(&TableDefinition::new("u").with_column_definition(
            ColumnDefinition::nullable("a", SqlType::Text).with_collation("no such collation"),
        ))
        .unwrap_err();
    assert!(e.to_string().contains("no such collation"), "{e}");
}

#[test]
fn schemas_and_tables_sync() {
    let dir = temp_dir();
    let mut conn = Connection::connect(
        server().endpoint(),
        dir.path().join("s.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    let mut cat = Catalog::new(&mut conn);
    assert_eq!(
        cat.get_schema_names(None).unwrap(),
        vec![SchemaName::new("public")]
    );
    assert!(cat.has_schema("public").unwrap());
    assert!(!cat.has_schema("b").unwrap());

    cat.create_schema("b").unwrap();
    cat.create_schema_if_not_exists("b").unwrap();
    cat.create_schema("a").unwrap();
    let e = cat.create_schema("a").unwrap_err();
    assert_eq!(code(&e), Some("42710"), "{e}");
    let names: Vec<String> = cat
        .get_schema_names(None)
        .unwrap()
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    assert_eq!(names, ["a", "b", "public"]);
    // The database alias is the file stem.
    let db = DatabaseName::from("s");
    let qualified = cat.get_schema_names(Some(&db)).unwrap();
    assert_eq!(qualified[0], SchemaName::from(("s", "a")));
    assert!(cat.has_schema(("s", "b")).unwrap());

    assert_eq!(cat.get_table_names("b").unwrap(), Vec::<TableName>::new());
    for t in ["y", "x"] {
        cat.create_table(&TableDefinition::new(("b", t)).with_column("c", SqlType::Int))
            .unwrap();
    }
    cat.create_table(&TableDefinition::new("p").with_column("c", SqlType::Int))
        .unwrap();
    assert_eq!(
        cat.get_table_names("b").unwrap(),
        vec![TableName::from(("b", "x")), TableName::from(("b", "y"))]
    );
    assert_eq!(
        cat.get_table_names("public").unwrap(),
        vec![TableName::from(("public", "p"))]
    );
    assert_eq!(
        cat.get_table_names(("s", "b")).unwrap()[0],
        TableName::from(("s", "b", "x"))
    );
    let e = cat.get_table_names("nope").unwrap_err();
    assert_eq!(code(&e), Some("3F000"), "{e}");
    let e = cat.get_table_names(("s", "nope")).unwrap_err();
    assert_eq!(code(&e), Some("3F000"), "{e}");
    // A system schema lists no tables, as in Tableau's Hyper API.
    assert_eq!(
        cat.get_table_names("pg_catalog").unwrap(),
        Vec::<TableName>::new()
    );

    assert!(cat.has_table(("b", "x")).unwrap());
    assert!(cat.has_table("p").unwrap());
    assert!(!cat.has_table("x").unwrap(), "unqualified means public");
    assert!(!cat.has_table(("nope", "x")).unwrap());

    let if_not_exists = TableDefinition::new(("b", "x")).with_column("other", SqlType::Text);
    cat.create_table_if_not_exists(&if_not_exists).unwrap();
    assert_eq!(
        cat.get_table_definition(("b", "x")).unwrap().columns()[0].name(),
        "c"
    );

    cat.drop_table(("b", "x")).unwrap();
    assert!(!cat.has_table(("b", "x")).unwrap());
    cat.drop_table_if_exists(("b", "x")).unwrap();
    let e = cat.drop_table(("b", "x")).unwrap_err();
    assert_eq!(code(&e), Some("42P01"), "{e}");
}

#[test]
fn weird_names_sync() {
    let dir = temp_dir();
    let mut conn = Connection::connect(
        server().endpoint(),
        dir.path().join("w.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    let mut cat = Catalog::new(&mut conn);
    let schema = "my \"schema\". ☃";
    let tables = [
        "a.b",
        "with space",
        "quote\"s'",
        "ünïcödé ☃",
        "SELECT",
        "Upper",
        "upper",
    ];
    cat.create_schema(schema).unwrap();
    for t in tables {
        let def = TableDefinition::new((schema, t))
            .with_not_null_column("col \"1\". ☃", SqlType::Int)
            .with_column("'; DROP TABLE x; --", SqlType::Text)
            .with_column("Col", SqlType::Text)
            .with_column("col", SqlType::Text);
        cat.create_table(&def).unwrap();
        assert!(cat.has_table((schema, t)).unwrap(), "{t}");
        let got = cat.get_table_definition((schema, t)).unwrap();
        assert_eq!(got.columns(), def.columns(), "{t}");
        assert_eq!(got.name(), &TableName::from(("w", schema, t)));
    }
    let mut expected: Vec<TableName> = tables
        .iter()
        .map(|t| TableName::from((schema, *t)))
        .collect();
    expected.sort();
    let mut listed = cat.get_table_names(schema).unwrap();
    listed.sort();
    assert_eq!(listed, expected);
    for t in tables {
        cat.drop_table((schema, t)).unwrap();
    }
    assert!(cat.get_table_names(schema).unwrap().is_empty());
}

#[test]
fn errors_sync() {
    let dir = temp_dir();
    let mut conn = Connection::connect(
        server().endpoint(),
        dir.path().join("e.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    let mut cat = Catalog::new(&mut conn);
    let def = TableDefinition::new("t").with_column("a", SqlType::Int);
    cat.create_table(&def).unwrap();
    let e = cat.create_table(&def).unwrap_err();
    assert_eq!(
        e.code(),
        Some(&hyperdb_api::SqlState::DUPLICATE_TABLE),
        "{e}"
    );
    cat.create_table_if_not_exists(&def).unwrap();

    let e = cat.drop_table("missing").unwrap_err();
    assert_eq!(code(&e), Some("42P01"), "{e}");
    let e = cat.get_table_definition(("public", "missing")).unwrap_err();
    assert_eq!(code(&e), Some("42P01"), "{e}");
    assert!(e.to_string().contains("\"public\".\"missing\""), "{e}");
    let e = cat
        .create_table(&TableDefinition::new(("nope", "t")).with_column("a", SqlType::Int))
        .unwrap_err();
    assert_eq!(code(&e), Some("3F000"), "{e}");

    // Rejected before anything is sent: the connection stays idle and usable.
    let nul_errors = [
        cat.create_table(&TableDefinition::new("t\0").with_column("a", SqlType::Int))
            .unwrap_err(),
        cat.create_table(&TableDefinition::new("u").with_column("a\0", SqlType::Int))
            .unwrap_err(),
        cat.create_schema("s\0").unwrap_err(),
        cat.has_table(("s\0", "t")).unwrap_err(),
        cat.get_table_definition("t\0").unwrap_err(),
        cat.get_table_names("\0").unwrap_err(),
        cat.drop_table_if_exists("t\0").unwrap_err(),
        cat.get_schema_names(Some(&DatabaseName::from("d\0")))
            .unwrap_err(),
        cat.create_table(&TableDefinition::new("u")).unwrap_err(),
        cat.create_table(
            &TableDefinition::new("u")
                .with_column("a", SqlType::Int)
                .with_column("a", SqlType::Text),
        )
        .unwrap_err(),
    ];
    for e in &nul_errors {
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
    }
    assert!(
        nul_errors[9].to_string().contains("\"a\""),
        "{}",
        nul_errors[9]
    );
    assert!(!cat.has_table("u").unwrap());
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    assert_eq!(conn.query_scalar::<i32>("SELECT 1").unwrap(), 1);
}

#[test]
fn databases_sync() {
    let dir = temp_dir();
    let mut conn = Connection::connect(
        server().endpoint(),
        dir.path().join("main.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    let mut cat = Catalog::new(&mut conn);
    let path = dir.path().join("x \"y\".hyper");
    cat.create_database(&path).unwrap();
    let e = cat.create_database(&path).unwrap_err();
    assert_eq!(code(&e), Some("42P04"), "{e}");
    cat.create_database_if_not_exists(&path).unwrap();
    cat.attach_database(&path, "x").unwrap();
    cat.create_schema(("x", "s")).unwrap();
    cat.create_table(&TableDefinition::new(("x", "s", "t")).with_column("a", SqlType::Int))
        .unwrap();
    let x = DatabaseName::from("x");
    assert_eq!(
        cat.get_schema_names(Some(&x)).unwrap(),
        vec![
            SchemaName::from(("x", "public")),
            SchemaName::from(("x", "s"))
        ]
    );
    assert_eq!(
        cat.get_table_names(("x", "s")).unwrap(),
        vec![TableName::from(("x", "s", "t"))]
    );
    // With two databases attached, unqualified names resolve nowhere.
    assert!(cat.get_schema_names(None).unwrap().is_empty());
    let e = cat.drop_database(&path).unwrap_err();
    assert_eq!(
        code(&e),
        Some("55006"),
        "attached files cannot be dropped: {e}"
    );
    cat.detach_database("x").unwrap();
    cat.drop_database(&path).unwrap();
    assert!(!path.exists());
    cat.drop_database_if_exists(&path).unwrap();
    assert!(cat.drop_database(&path).is_err());
}

/// A database the connection has not attached is named as such (3D000,
/// with a hint), not as hyperd's `schema "nodb"."pg_catalog" does not
/// exist`, in every catalog lookup that takes a database; the connection
/// answers the next call.
#[tokio::test]
async fn an_unattached_database_is_named() {
    let dir = temp_dir();
    let path = dir.path().join("main.hyper");
    let mut conn = Connection::connect(server().endpoint(), &path, CreateMode::Create).unwrap();
    let nodb = DatabaseName::from("nodb");
    let check = |what: &str, e: Error| {
        assert_eq!(code(&e), Some("3D000"), "{what}: {e}");
        assert!(
            e.to_string().contains("database \"nodb\" is not attached"),
            "{what}: {e}"
        );
        assert!(
            e.db_error().and_then(|d| d.hint.as_ref()).is_some(),
            "{what}: {e:?}"
        );
    };
    let mut cat = Catalog::new(&mut conn);
    check(
        "has_table",
        cat.has_table(("nodb", "public", "t")).unwrap_err(),
    );
    check(
        "has_schema",
        cat.has_schema(("nodb", "public")).unwrap_err(),
    );
    check(
        "get_schema_names",
        cat.get_schema_names(Some(&nodb)).unwrap_err(),
    );
    check(
        "get_table_names",
        cat.get_table_names(("nodb", "public")).unwrap_err(),
    );
    check(
        "get_table_definition",
        cat.get_table_definition(("nodb", "public", "t"))
            .unwrap_err(),
    );
    // A missing schema of an attached database is still 3F000.
    let main = DatabaseName::from("main");
    let e = cat.get_table_names(("main", "nope")).unwrap_err();
    assert_eq!(code(&e), Some("3F000"), "{e}");
    assert!(cat.get_schema_names(Some(&main)).unwrap().len() == 1);
    drop(conn);
    let mut conn = AsyncConnection::connect(server().endpoint(), &path, CreateMode::DoNotCreate)
        .await
        .unwrap();
    let mut cat = AsyncCatalog::new(&mut conn);
    check(
        "async get_schema_names",
        cat.get_schema_names(Some(&nodb)).await.unwrap_err(),
    );
    check(
        "async has_table",
        cat.has_table(("nodb", "public", "t")).await.unwrap_err(),
    );
    assert!(!cat.has_table(("main", "public", "t")).await.unwrap());
}

#[tokio::test]
async fn catalog_async() {
    let dir = temp_dir();
    let mut conn = AsyncConnection::connect(
        server().endpoint(),
        dir.path().join("as.hyper"),
        CreateMode::Create,
    )
    .await
    .unwrap();
    let mut cat = AsyncCatalog::new(&mut conn);
    cat.create_schema("s").await.unwrap();
    cat.create_schema_if_not_exists("s").await.unwrap();
    assert!(cat.has_schema("s").await.unwrap());
    assert_eq!(cat.get_schema_names(None).await.unwrap().len(), 2);
    let def = TableDefinition::new(("s", "t \"1\""))
        .with_not_null_column("a", SqlType::BigInt)
        .with_column("b", SqlType::numeric(10, 2).unwrap());
    cat.create_table(&def).await.unwrap();
    cat.create_table_if_not_exists(&def).await.unwrap();
    let e = cat.create_table(&def).await.unwrap_err();
    assert_eq!(code(&e), Some("42P07"), "{e}");
    assert!(cat.has_table(def.name()).await.unwrap());
    assert_eq!(
        cat.get_table_names("s").await.unwrap(),
        vec![def.name().clone()]
    );
    let got = cat.get_table_definition(def.name()).await.unwrap();
    assert_eq!(got.columns(), def.columns());
    assert_eq!(got.name(), &TableName::from(("as", "s", "t \"1\"")));
    let e = cat
        .get_table_definition(("s", "missing"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), Some("42P01"), "{e}");
    let e = cat.has_table("\0").await.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
    cat.drop_table(def.name()).await.unwrap();
    cat.drop_table_if_exists(def.name()).await.unwrap();
    assert!(cat.drop_table(def.name()).await.is_err());

    let path = dir.path().join("other.hyper");
    cat.create_database(&path).await.unwrap();
    cat.create_database_if_not_exists(&path).await.unwrap();
    cat.attach_database(&path, "o").await.unwrap();
    assert!(cat.has_schema(("o", "public")).await.unwrap());
    cat.detach_database("o").await.unwrap();
    cat.drop_database(&path).await.unwrap();
    cat.drop_database_if_exists(&path).await.unwrap();
    assert_eq!(conn.query_scalar::<i32>("SELECT 1").await.unwrap(), 1);
}

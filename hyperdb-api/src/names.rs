//! Database, schema and table names, kept as plain strings until they are
//! rendered as SQL.
//!
//! A name is never parsed: `TableName::from("a.b")` is a table literally named
//! `a.b`, because splitting on dots is how quoted names with dots get mangled.
//! Qualify with the tuple conversions or the `with_*` builders instead.
//! Rendering always double-quotes through [`crate::escape`], so case, spaces,
//! quotes and reserved words survive.

use std::fmt;

use crate::error::Result;
use crate::escape::push_identifier;

/// The schema Hyper creates in every database. SQL has no `db..table` form,
/// so a table qualified by a database alone lives here.
pub const DEFAULT_SCHEMA: &str = "public";

/// An attached database, by its alias (not its file path).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatabaseName(String);

/// A schema, optionally inside a specific attached database.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SchemaName {
    database: Option<DatabaseName>,
    name: String,
}

/// A table, optionally qualified by schema and database.
///
/// Without a schema the server's search path decides, which only works when
/// exactly one database is attached; qualify names when several are.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableName {
    schema: Option<SchemaName>,
    name: String,
}

impl DatabaseName {
    pub fn new(name: impl Into<String>) -> DatabaseName {
        DatabaseName(name.into())
    }

    /// The unquoted alias.
    pub fn name(&self) -> &str {
        &self.0
    }

    /// The quoted SQL form; errors (before anything is sent) on a NUL byte.
    pub fn to_sql(&self) -> Result<String> {
        let mut out = String::new();
        self.push_sql(&mut out)?;
        Ok(out)
    }

    pub(crate) fn push_sql(&self, out: &mut String) -> Result<()> {
        push_identifier(out, &self.0)
    }
}

impl SchemaName {
    pub fn new(name: impl Into<String>) -> SchemaName {
        SchemaName {
            database: None,
            name: name.into(),
        }
    }

    /// The same schema inside the attached database `database`.
    pub fn with_database(mut self, database: impl Into<DatabaseName>) -> SchemaName {
        self.database = Some(database.into());
        self
    }

    /// The unquoted schema name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn database(&self) -> Option<&DatabaseName> {
        self.database.as_ref()
    }

    /// The quoted, qualified SQL form; errors (before anything is sent) on a
    /// NUL byte.
    pub fn to_sql(&self) -> Result<String> {
        let mut out = String::new();
        self.push_sql(&mut out)?;
        Ok(out)
    }

    pub(crate) fn push_sql(&self, out: &mut String) -> Result<()> {
        if let Some(db) = &self.database {
            db.push_sql(out)?;
            out.push('.');
        }
        push_identifier(out, &self.name)
    }
}

impl TableName {
    /// An unqualified table name, taken literally (dots included).
    pub fn new(name: impl Into<String>) -> TableName {
        TableName {
            schema: None,
            name: name.into(),
        }
    }

    /// Puts the table in `schema`. A schema without a database keeps the
    /// database this name already had.
    pub fn with_schema(mut self, schema: impl Into<SchemaName>) -> TableName {
        let mut schema = schema.into();
        if schema.database.is_none() {
            schema.database = self.database().cloned();
        }
        self.schema = Some(schema);
        self
    }

    /// Puts the table in the attached database `database`; without a schema
    /// that means its [`DEFAULT_SCHEMA`].
    pub fn with_database(mut self, database: impl Into<DatabaseName>) -> TableName {
        let schema = self
            .schema
            .take()
            .unwrap_or_else(|| SchemaName::new(DEFAULT_SCHEMA));
        self.schema = Some(schema.with_database(database));
        self
    }

    /// The unquoted table name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn schema(&self) -> Option<&SchemaName> {
        self.schema.as_ref()
    }

    pub fn database(&self) -> Option<&DatabaseName> {
        self.schema.as_ref().and_then(SchemaName::database)
    }

    /// The quoted, qualified SQL form (`"db"."schema"."t"`); errors (before
    /// anything is sent) on a NUL byte. Build SQL with this, not `Display`.
    pub fn to_sql(&self) -> Result<String> {
        let mut out = String::new();
        self.push_sql(&mut out)?;
        Ok(out)
    }

    pub(crate) fn push_sql(&self, out: &mut String) -> Result<()> {
        if let Some(schema) = &self.schema {
            schema.push_sql(out)?;
            out.push('.');
        }
        push_identifier(out, &self.name)
    }
}

/// `Display` must not fail, so a NUL (which [`crate::escape`] rejects) is
/// shown as U+FFFD; SQL goes through `to_sql`, which reports it.
fn display_via(
    f: &mut fmt::Formatter<'_>,
    sql: Result<String>,
    lossy: impl FnOnce() -> Result<String>,
) -> fmt::Result {
    match sql.or_else(|_| lossy()) {
        Ok(s) => f.write_str(&s),
        Err(_) => Err(fmt::Error),
    }
}

fn without_nul(s: &str) -> String {
    s.replace('\0', "\u{FFFD}")
}

impl fmt::Display for DatabaseName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_via(f, self.to_sql(), || {
            DatabaseName(without_nul(&self.0)).to_sql()
        })
    }
}

impl fmt::Display for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_via(f, self.to_sql(), || {
            SchemaName {
                database: self
                    .database
                    .as_ref()
                    .map(|d| DatabaseName(without_nul(&d.0))),
                name: without_nul(&self.name),
            }
            .to_sql()
        })
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_via(f, self.to_sql(), || {
            TableName {
                schema: self.schema.as_ref().map(|s| SchemaName {
                    database: s.database.as_ref().map(|d| DatabaseName(without_nul(&d.0))),
                    name: without_nul(&s.name),
                }),
                name: without_nul(&self.name),
            }
            .to_sql()
        })
    }
}

impl From<&str> for DatabaseName {
    fn from(name: &str) -> DatabaseName {
        DatabaseName::new(name)
    }
}

impl From<String> for DatabaseName {
    fn from(name: String) -> DatabaseName {
        DatabaseName::new(name)
    }
}

impl From<&DatabaseName> for DatabaseName {
    fn from(name: &DatabaseName) -> DatabaseName {
        name.clone()
    }
}

impl From<&str> for SchemaName {
    fn from(name: &str) -> SchemaName {
        SchemaName::new(name)
    }
}

impl From<String> for SchemaName {
    fn from(name: String) -> SchemaName {
        SchemaName::new(name)
    }
}

impl From<&SchemaName> for SchemaName {
    fn from(name: &SchemaName) -> SchemaName {
        name.clone()
    }
}

/// `(database, schema)`.
impl From<(&str, &str)> for SchemaName {
    fn from((database, schema): (&str, &str)) -> SchemaName {
        SchemaName::new(schema).with_database(database)
    }
}

impl From<&str> for TableName {
    fn from(name: &str) -> TableName {
        TableName::new(name)
    }
}

impl From<String> for TableName {
    fn from(name: String) -> TableName {
        TableName::new(name)
    }
}

impl From<&TableName> for TableName {
    fn from(name: &TableName) -> TableName {
        name.clone()
    }
}

/// `(schema, table)`.
impl From<(&str, &str)> for TableName {
    fn from((schema, table): (&str, &str)) -> TableName {
        TableName::new(table).with_schema(schema)
    }
}

/// `(database, schema, table)`.
impl From<(&str, &str, &str)> for TableName {
    fn from((database, schema, table): (&str, &str, &str)) -> TableName {
        TableName::new(table).with_schema(SchemaName::new(schema).with_database(database))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn names_are_never_split() {
        let t = TableName::from("a.b");
        assert_eq!(t.name(), "a.b");
        assert!(t.schema().is_none());
        assert_eq!(t.to_sql().unwrap(), "\"a.b\"");
        assert_eq!(SchemaName::from("x.y").to_sql().unwrap(), "\"x.y\"");
        assert_eq!(DatabaseName::from("d.e").to_sql().unwrap(), "\"d.e\"");
    }

    #[test]
    fn qualification() {
        let t = TableName::from(("s", "t"));
        assert_eq!(t.schema().unwrap().name(), "s");
        assert!(t.database().is_none());
        assert_eq!(t.to_string(), "\"s\".\"t\"");

        let t = TableName::from(("db", "s", "t"));
        assert_eq!(t.database().unwrap().name(), "db");
        assert_eq!(t.to_sql().unwrap(), "\"db\".\"s\".\"t\"");
        assert_eq!(t, TableName::new("t").with_database("db").with_schema("s"));
        assert_eq!(t, TableName::new("t").with_schema("s").with_database("db"));

        let t = TableName::new("t").with_database("db");
        assert_eq!(t.to_sql().unwrap(), "\"db\".\"public\".\"t\"");
        assert_eq!(SchemaName::from(("db", "s")).to_string(), "\"db\".\"s\"");
    }

    #[test]
    fn escaping() {
        let t = TableName::from(("my \"schema\"", "Ünï cödé"));
        assert_eq!(t.to_sql().unwrap(), "\"my \"\"schema\"\"\".\"Ünï cödé\"");
        assert_eq!(TableName::from("").to_sql().unwrap(), "\"\"");
    }

    #[test]
    fn nul_errors_in_sql_but_displays() {
        let t = TableName::from(("s\0", "t"));
        assert!(matches!(t.to_sql(), Err(Error::InvalidArgument { .. })));
        assert_eq!(t.to_string(), "\"s\u{FFFD}\".\"t\"");
        let d = DatabaseName::from("\0");
        assert!(d.to_sql().is_err());
        assert_eq!(d.to_string(), "\"\u{FFFD}\"");
        let s = SchemaName::from(("d\0", "s"));
        assert!(s.to_sql().is_err());
        assert_eq!(s.to_string(), "\"d\u{FFFD}\".\"s\"");
    }
}

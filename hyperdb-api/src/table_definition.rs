//! Table schemas on the client side: what `CREATE TABLE` needs, what the
//! catalog reads back, and what a HyperBinary encoder needs to lay out rows.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::escape::push_identifier;
use crate::names::TableName;
use crate::types::{ColumnType, Nullability, SqlType};

/// One column: name, type, nullability and optional collation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDefinition {
    name: String,
    column_type: ColumnType,
    collation: Option<String>,
}

impl ColumnDefinition {
    pub fn new(name: impl Into<String>, sql_type: SqlType, nullability: Nullability) -> Self {
        ColumnDefinition {
            name: name.into(),
            column_type: ColumnType {
                sql_type,
                nullability,
            },
            collation: None,
        }
    }

    /// A column that admits NULL, the SQL default.
    pub fn nullable(name: impl Into<String>, sql_type: SqlType) -> Self {
        ColumnDefinition::new(name, sql_type, Nullability::Nullable)
    }

    pub fn not_null(name: impl Into<String>, sql_type: SqlType) -> Self {
        ColumnDefinition::new(name, sql_type, Nullability::NotNull)
    }

    /// Compares and sorts this text column by `collation` (e.g. `en_US_CI`
    /// for case-insensitive English) instead of by bytes.
    pub fn with_collation(mut self, collation: impl Into<String>) -> Self {
        self.collation = Some(collation.into());
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn sql_type(&self) -> &SqlType {
        &self.column_type.sql_type
    }

    pub fn column_type(&self) -> &ColumnType {
        &self.column_type
    }

    pub fn is_nullable(&self) -> bool {
        self.column_type.is_nullable()
    }

    pub fn collation(&self) -> Option<&str> {
        self.collation.as_deref()
    }

    /// `"name" TYPE [COLLATE "c"] [NOT NULL]`.
    fn push_sql(&self, out: &mut String) -> Result<()> {
        push_identifier(out, &self.name)?;
        out.push(' ');
        out.push_str(&self.column_type.sql_type.to_string());
        if let Some(c) = &self.collation {
            out.push_str(" COLLATE ");
            push_identifier(out, c)?;
        }
        if !self.is_nullable() {
            out.push_str(" NOT NULL");
        }
        Ok(())
    }
}

/// Whether a table outlives its session, as Tableau's Hyper API names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Persistence {
    /// Stored in its database file.
    #[default]
    Permanent,
    /// `CREATE TEMPORARY TABLE`: private to the session (schema `pg_temp`,
    /// found first by an unqualified name), gone with it.
    Temporary,
}

/// A table's name, columns in order, and persistence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDefinition {
    name: TableName,
    columns: Vec<ColumnDefinition>,
    persistence: Persistence,
}

impl TableDefinition {
    pub fn new(name: impl Into<TableName>) -> Self {
        TableDefinition {
            name: name.into(),
            columns: Vec::new(),
            persistence: Persistence::Permanent,
        }
    }

    /// A temporary table ([`Persistence::Temporary`]) or not: what
    /// [`Catalog::create_table`](crate::Catalog::create_table) creates.
    pub fn with_persistence(mut self, persistence: Persistence) -> Self {
        self.persistence = persistence;
        self
    }

    pub fn persistence(&self) -> Persistence {
        self.persistence
    }

    /// Appends a nullable column.
    pub fn with_column(self, name: impl Into<String>, sql_type: SqlType) -> Self {
        self.with_column_definition(ColumnDefinition::nullable(name, sql_type))
    }

    pub fn with_not_null_column(self, name: impl Into<String>, sql_type: SqlType) -> Self {
        self.with_column_definition(ColumnDefinition::not_null(name, sql_type))
    }

    pub fn with_column_definition(mut self, column: ColumnDefinition) -> Self {
        self.columns.push(column);
        self
    }

    /// Appends a column. Duplicates are reported when SQL is built, so that
    /// building a definition never fails halfway.
    pub fn add_column(&mut self, column: ColumnDefinition) {
        self.columns.push(column);
    }

    pub fn name(&self) -> &TableName {
        &self.name
    }

    pub fn columns(&self) -> &[ColumnDefinition] {
        &self.columns
    }

    /// Checks that `actual` (the table as the server defines it) has
    /// exactly these columns, in this order, with the same types and
    /// nullability. Rows built for this definition then land where they
    /// were meant to; on a mismatch the first differing column is named.
    pub fn check_columns_match(&self, actual: &TableDefinition) -> Result<()> {
        let describe = |c: Option<&ColumnDefinition>| match c {
            Some(c) => format!(
                "`{}` {}{}",
                c.name,
                c.sql_type(),
                if c.is_nullable() { "" } else { " NOT NULL" }
            ),
            None => "no such column".to_owned(),
        };
        let count = self.columns.len().max(actual.columns.len());
        for i in 0..count {
            let (given, found) = (self.columns.get(i), actual.columns.get(i));
            let same = match (given, found) {
                (Some(g), Some(f)) => {
                    g.name == f.name
                        && g.sql_type() == f.sql_type()
                        && g.is_nullable() == f.is_nullable()
                }
                _ => false,
            };
            if !same {
                return Err(Error::DefinitionMismatch {
                    table: actual.name.to_string(),
                    column: found.or(given).map(|c| c.name.clone()),
                    actual: describe(found),
                    given: describe(given),
                });
            }
        }
        Ok(())
    }

    pub fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// Position of the first column named exactly `name` (case-sensitive,
    /// as quoted identifiers are).
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The first column named exactly `name` (see [`column_index`](Self::column_index)).
    pub(crate) fn column_named(&self, name: &str) -> Option<&ColumnDefinition> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Every column's type and nullability, in order: what a HyperBinary
    /// encoder needs.
    pub fn column_types(&self) -> Vec<ColumnType> {
        self.columns.iter().map(|c| c.column_type).collect()
    }

    /// Checks what the server would reject less clearly (or, for an empty
    /// column list, accept): no columns, or one name used twice.
    pub fn validate(&self) -> Result<()> {
        if self.columns.is_empty() {
            return Err(Error::invalid_argument(
                "columns",
                format!("table {} has no columns", self.name),
            ));
        }
        let mut seen = HashSet::with_capacity(self.columns.len());
        for c in &self.columns {
            if !seen.insert(c.name.as_str()) {
                return Err(Error::invalid_argument(
                    "columns",
                    format!("column \"{}\" appears twice in table {}", c.name, self.name),
                ));
            }
        }
        Ok(())
    }

    /// `CREATE [TEMPORARY] TABLE [IF NOT EXISTS] "s"."t" ("a" INTEGER NOT
    /// NULL, ...)`, TEMPORARY by the definition's [`Persistence`].
    pub fn create_table_sql(&self, if_not_exists: bool) -> Result<String> {
        let create = match self.persistence {
            Persistence::Permanent => "CREATE TABLE ",
            Persistence::Temporary => "CREATE TEMPORARY TABLE ",
        };
        self.create_sql(create, if_not_exists)
    }

    fn create_sql(&self, create: &str, if_not_exists: bool) -> Result<String> {
        self.validate()?;
        let mut out = String::from(create);
        if if_not_exists {
            out.push_str("IF NOT EXISTS ");
        }
        self.name.push_sql(&mut out)?;
        out.push_str(" (");
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            c.push_sql(&mut out)?;
        }
        out.push(')');
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> TableDefinition {
        TableDefinition::new(("s", "t"))
            .with_not_null_column("a", SqlType::Int)
            .with_column("b", SqlType::Text)
            .with_column_definition(
                ColumnDefinition::nullable("c \"q\"", SqlType::Varchar(10))
                    .with_collation("en_US_CI"),
            )
    }

    #[test]
    fn create_sql() {
        assert_eq!(
            def().create_table_sql(false).unwrap(),
            "CREATE TABLE \"s\".\"t\" (\"a\" INTEGER NOT NULL, \"b\" TEXT, \
             \"c \"\"q\"\"\" VARCHAR(10) COLLATE \"en_US_CI\")"
        );
        assert!(def()
            .create_table_sql(true)
            .unwrap()
            .starts_with("CREATE TABLE IF NOT EXISTS \"s\".\"t\" ("));
        assert!(def()
            .with_persistence(Persistence::Temporary)
            .create_table_sql(true)
            .unwrap()
            .starts_with("CREATE TEMPORARY TABLE IF NOT EXISTS \"s\".\"t\" ("));
    }

    #[test]
    fn accessors() {
        let d = def();
        assert_eq!(d.column_count(), 3);
        assert_eq!(d.column_index("b"), Some(1));
        assert_eq!(d.column_index("B"), None);
        assert_eq!(
            d.column_types(),
            vec![
                ColumnType::not_null(SqlType::Int),
                ColumnType::nullable(SqlType::Text),
                ColumnType::nullable(SqlType::Varchar(10)),
            ]
        );
        assert_eq!(d.columns()[2].collation(), Some("en_US_CI"));
        assert!(!d.columns()[0].is_nullable());
        assert_eq!(d.name().name(), "t");
    }

    #[test]
    fn rejects_duplicates_and_empty() {
        let e = def()
            .with_column("b", SqlType::Int)
            .create_table_sql(false)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }));
        assert!(e.to_string().contains("\"b\""), "{e}");
        let e = TableDefinition::new("t")
            .create_table_sql(false)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    }

    #[test]
    fn nul_is_rejected() {
        let mut d = def();
        d.add_column(ColumnDefinition::nullable("x\0", SqlType::Int));
        assert!(matches!(
            d.create_table_sql(false),
            Err(Error::InvalidArgument { .. })
        ));
        let d = TableDefinition::new("t\0").with_column("a", SqlType::Int);
        assert!(matches!(
            d.create_table_sql(false),
            Err(Error::InvalidArgument { .. })
        ));
    }
}

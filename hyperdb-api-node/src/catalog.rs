//! Table definitions and catalog calls: JS objects in, `hyperdb_api`'s
//! `Catalog` does the work.

use hyperdb_api::types::SqlType;
use hyperdb_api::{ColumnDefinition, Persistence, Place, SchemaName, TableDefinition, TableName};
use napi_derive::napi;

use crate::connection::CatalogAnswer;
use crate::error::{invalid, js, Result};

/// A table or schema name, optionally qualified.
#[napi(object)]
pub struct TableRef {
    pub database: Option<String>,
    pub schema: Option<String>,
    pub name: String,
}

/// A column of a [`TableDef`].
#[napi(object)]
pub struct ColumnDef {
    pub name: String,
    /// The SQL type as written in SQL: `INT`, `VARCHAR(10)`, `NUMERIC(38,5)`, ...
    pub sql_type: String,
    /// Defaults to true.
    pub nullable: Option<bool>,
    pub collation: Option<String>,
}

/// A table: its name, columns and persistence.
#[napi(object)]
pub struct TableDef {
    pub table: TableRef,
    pub columns: Vec<ColumnDef>,
    /// `permanent` (the default) or `temporary`.
    pub persistence: Option<String>,
}

impl TableRef {
    pub(crate) fn table_name(&self) -> TableName {
        let mut name = TableName::new(self.name.clone());
        if let Some(schema) = &self.schema {
            let mut schema = SchemaName::new(schema.clone());
            if let Some(db) = &self.database {
                schema = schema.with_database(db.clone());
            }
            name = name.with_schema(schema);
        } else if let Some(db) = &self.database {
            name = name.with_database(db.clone());
        }
        name
    }

    fn schema_name(&self) -> SchemaName {
        let schema = SchemaName::new(self.name.clone());
        match &self.database {
            Some(db) => schema.with_database(db.clone()),
            None => schema,
        }
    }

    fn from_table(t: &TableName) -> TableRef {
        TableRef {
            database: t.database().map(|d| d.name().to_owned()),
            schema: t.schema().map(|s| s.name().to_owned()),
            name: t.name().to_owned(),
        }
    }

    fn from_schema(s: &SchemaName) -> TableRef {
        TableRef {
            database: s.database().map(|d| d.name().to_owned()),
            schema: None,
            name: s.name().to_owned(),
        }
    }
}

impl TableDef {
    pub(crate) fn to_rust(&self) -> Result<TableDefinition> {
        let mut table = TableDefinition::new(self.table.table_name());
        for c in &self.columns {
            let ty = c
                .sql_type
                .parse::<SqlType>()
                .map_err(|e| invalid(&format!("column {}", c.name), &e.to_string()))?;
            let mut column = if c.nullable.unwrap_or(true) {
                ColumnDefinition::nullable(c.name.clone(), ty)
            } else {
                ColumnDefinition::not_null(c.name.clone(), ty)
            };
            if let Some(collation) = &c.collation {
                column = column.with_collation(collation.clone());
            }
            table.add_column(column);
        }
        js(table.validate())?;
        let persistence = match self.persistence.as_deref() {
            None | Some("permanent") => Persistence::Permanent,
            Some("temporary") => Persistence::Temporary,
            Some(other) => {
                return Err(invalid(
                    "persistence",
                    &format!("'permanent' or 'temporary', not {other:?}"),
                ))
            }
        };
        Ok(table.with_persistence(persistence))
    }

    pub(crate) fn from_rust(t: &TableDefinition) -> TableDef {
        TableDef {
            table: TableRef::from_table(t.name()),
            columns: t
                .columns()
                .iter()
                .map(|c| ColumnDef {
                    name: c.name().to_owned(),
                    sql_type: c.sql_type().to_string(),
                    nullable: Some(c.is_nullable()),
                    collation: c.collation().map(str::to_owned),
                })
                .collect(),
            persistence: Some(
                match t.persistence() {
                    Persistence::Permanent => "permanent",
                    Persistence::Temporary => "temporary",
                }
                .to_owned(),
            ),
        }
    }
}

fn answer() -> CatalogAnswer {
    CatalogAnswer {
        flag: None,
        names: None,
        table: None,
    }
}

/// Runs catalog operation `op` on `target` (a table, schema or database)
/// or `name` (a path or alias).
pub(crate) async fn run(
    place: Place,
    op: &str,
    target: Option<TableRef>,
    name: Option<String>,
) -> Result<CatalogAnswer> {
    let named = || target.as_ref().ok_or_else(|| invalid(op, "needs a name"));
    let path = || {
        name.clone()
            .ok_or_else(|| invalid(op, "needs a path or alias"))
    };
    let mut guard = js(place.lock().await)?;
    let mut catalog = guard.conn().catalog();
    let mut out = answer();
    match op {
        "createSchema" => js(catalog.create_schema(named()?.schema_name()).await)?,
        "createSchemaIfNotExists" => js(catalog
            .create_schema_if_not_exists(named()?.schema_name())
            .await)?,
        "hasSchema" => out.flag = Some(js(catalog.has_schema(named()?.schema_name()).await)?),
        "hasTable" => out.flag = Some(js(catalog.has_table(named()?.table_name()).await)?),
        "dropTable" => js(catalog.drop_table(named()?.table_name()).await)?,
        "dropTableIfExists" => js(catalog.drop_table_if_exists(named()?.table_name()).await)?,
        "getTableDefinition" => {
            let def = js(catalog.get_table_definition(named()?.table_name()).await)?;
            out.table = Some(TableDef::from_rust(&def));
        }
        "getTableNames" => {
            let names = js(catalog.get_table_names(named()?.schema_name()).await)?;
            out.names = Some(names.iter().map(TableRef::from_table).collect());
        }
        "getSchemaNames" => {
            let db = target
                .as_ref()
                .map(|t| hyperdb_api::DatabaseName::new(t.name.clone()));
            let names = js(catalog.get_schema_names(db.as_ref()).await)?;
            out.names = Some(names.iter().map(TableRef::from_schema).collect());
        }
        "getDatabaseNames" => {
            let names = js(catalog.get_database_names().await)?;
            out.names = Some(
                names
                    .iter()
                    .map(|d| TableRef {
                        database: None,
                        schema: None,
                        name: d.name().to_owned(),
                    })
                    .collect(),
            );
        }
        "attachDatabase" => js(catalog.attach_database(path()?, &named()?.name).await)?,
        "detachDatabase" => js(catalog.detach_database(&path()?).await)?,
        "createDatabase" => js(catalog.create_database(path()?).await)?,
        "createDatabaseIfNotExists" => js(catalog.create_database_if_not_exists(path()?).await)?,
        "dropDatabase" => js(catalog.drop_database(path()?).await)?,
        "dropDatabaseIfExists" => js(catalog.drop_database_if_exists(path()?).await)?,
        other => {
            return Err(invalid(
                "catalog operation",
                &format!("unknown operation {other:?}"),
            ))
        }
    }
    Ok(out)
}

/// `table` with every type spelled as hyperd spells it (`int4` becomes
/// `INTEGER`, `varchar` `TEXT`, ...), or an error naming a type that is none.
// Called from JS only: napi registers it in the addon, not in test builds.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn canonical_table(table: TableDef) -> Result<TableDef> {
    Ok(TableDef::from_rust(&table.to_rust()?))
}

/// `sql_type` as hyperd spells it, or an error naming why it is no Hyper
/// type (`NUMERIC(39,40)`): `SqlType`'s builders check with it, so that a
/// bad type is refused where it is made, not at `createTable`.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn canonical_type(sql_type: String) -> Result<String> {
    sql_type
        .parse::<SqlType>()
        .map(|t| t.to_string())
        .map_err(|e| invalid("a SQL type", &e.to_string()))
}

//! Inserts through SQL expressions: rows are copied into a temporary staging
//! table, then moved into the target with one `INSERT ... SELECT` that
//! computes each target column. For values with no binary input (GEOGRAPHY
//! from WKT text) or that are derived on the way in.

use std::sync::atomic::{AtomicU64, Ordering};

use hyperdb_api_core::types::ToHyperBinary;

use crate::error::{Error, Result};
use crate::escape::{push_identifier, quote_identifier};
use crate::insert::copy_tx::{CopyTx, Target};
use crate::insert::encoder::RowEncoder;
use crate::insert::inserter_methods;
use crate::insert::wire::Wire;
use crate::insert::{row_encoder, InsertFormat};
use crate::names::TableName;
use crate::table_definition::{Persistence, TableDefinition};
use crate::trace::StatementTrace;
use crate::{Connection, TransactionStatus};

/// How one target column gets its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnMapping {
    column: String,
    expression: Option<String>,
}

impl ColumnMapping {
    /// The input column of the same name, stored as it is: the input
    /// must have the target column's type (else `MappedInserter::new`
    /// refuses it, 42804, as Tableau's Hyper API does). hyperd's
    /// assignment cast would cut text to a VARCHAR(n)/CHAR(n) and round a
    /// NUMERIC to the target's scale without an error (measured:
    /// `'abcdef'` into VARCHAR(3) is `abc`, 1.2399 into NUMERIC(10,2)
    /// 1.24); map an [`expression`](Self::expression) with an explicit
    /// `CAST` when that is what is meant.
    pub fn column(name: impl Into<String>) -> ColumnMapping {
        ColumnMapping {
            column: name.into(),
            expression: None,
        }
    }

    /// A SQL expression over the input columns, e.g.
    /// `CAST("wkt" AS TABLEAU.TABGEOGRAPHY)`. It is SQL text written by the
    /// program, never user data: quote input names with
    /// [`crate::escape::quote_identifier`].
    pub fn expression(name: impl Into<String>, sql: impl Into<String>) -> ColumnMapping {
        ColumnMapping {
            column: name.into(),
            expression: Some(sql.into()),
        }
    }
}

/// Rows go in as `inputs` describes them and land in `target` as
/// `mappings` computes them; the same row API as [`crate::Inserter`].
///
/// `execute()` is all or nothing: if any expression fails (say, malformed
/// WKT), the target table is unchanged and the connection usable.
#[derive(Debug)]
pub struct MappedInserter<'c> {
    client: &'c mut hyperdb_api_core::client::Client,
    encoder: RowEncoder<Wire>,
    copy: CopyTx,
    finished: bool,
    insert_select: String,
    drop_stage: String,
    /// The connection's slow-statement threshold, for the trace of the
    /// `INSERT ... SELECT`.
    slow: Option<std::time::Duration>,
}

static STAGE_COUNTER: AtomicU64 = AtomicU64::new(0);

impl<'c> MappedInserter<'c> {
    /// Creates the staging table (the `inputs` columns; its name is ignored)
    /// and starts copying into it.
    pub fn new(
        conn: &'c mut Connection,
        target: impl Into<TableName>,
        inputs: &TableDefinition,
        mappings: &[ColumnMapping],
    ) -> Result<MappedInserter<'c>> {
        if mappings.is_empty() {
            return Err(Error::invalid_argument(
                "mappings",
                "at least one column is needed",
            ));
        }
        // A dropped inserter's ending, if one is queued, settles first.
        conn.client().settle()?;
        refuse_in_transaction(conn.transaction_status())?;
        let stage_name = format!(
            "hyperdb_stage_{}_{}",
            std::process::id(),
            STAGE_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut stage =
            TableDefinition::new(stage_name.as_str()).with_persistence(Persistence::Temporary);
        for c in inputs.columns() {
            stage.add_column(c.clone());
        }
        let target = target.into();
        let table = conn.catalog().get_table_definition(target.clone())?;
        check_plain_mappings(&table, inputs, mappings)?;
        let insert_select = insert_select_sql(&target, &stage_name, mappings)?;
        let drop_stage = format!("DROP TABLE IF EXISTS {}", quote_identifier(&stage_name)?);
        let (sql, mut encoder) = row_encoder(&stage, InsertFormat::default())?;
        conn.client().execute(&stage.create_table_sql(false)?)?;
        // The stage was made from `stage` just now: nothing to check.
        let copy = match CopyTx::open(conn, Target::Made(&stage), |_| Ok(sql.clone())) {
            Ok((copy, _)) => copy,
            Err(e) => {
                conn.client().enqueue_command(&drop_stage)?;
                return Err(e);
            }
        };
        let slow = conn.slow_statement_threshold();
        let client = conn.client();
        encoder.start_stream(client.copy_buf());
        Ok(MappedInserter {
            client,
            encoder,
            copy,
            finished: false,
            insert_select,
            drop_stage,
            slow,
        })
    }

    inserter_methods!(;);

    /// Moves the staged rows into the target; returns how many arrived.
    pub fn execute(mut self) -> Result<u64> {
        let staged = self.finish_copy();
        let moved = staged.and_then(|staged| {
            let trace = StatementTrace::start("mapped_insert", &self.insert_select, 0, self.slow);
            let moved = self
                .client
                .execute(&self.insert_select)
                .map_err(Error::from);
            let moved = trace.result(moved, |n| Some(*n))?;
            if moved != staged {
                return Err(Error::RowCountMismatch {
                    sent: staged,
                    stored: moved,
                });
            }
            Ok(moved)
        });
        // The stage goes either way; its own failure matters less than the insert's.
        let dropped = self.client.execute(&self.drop_stage);
        let moved = moved?;
        dropped?;
        Ok(moved)
    }
}

impl Drop for MappedInserter<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.abort_queued("inserter dropped without execute()");
            if let Err(e) = self.client.enqueue_command(&self.drop_stage) {
                tracing::warn!("could not queue dropping the staging table: {e}");
            }
        }
    }
}

/// The stage is made (DDL) and then filled (DML), which hyperd does not
/// do in one transaction ("mixing DDL and DML is currently not
/// supported"), and a stage made in one would outlive its `ROLLBACK`
/// (hyperd does not undo DDL): refused before anything is sent, 25001 as
/// for a transaction begun inside another.
fn refuse_in_transaction(status: TransactionStatus) -> Result<()> {
    crate::transaction::refuse_open(
        status,
        "a MappedInserter cannot run inside a transaction: it stages its rows in a temporary \
         table it creates, and hyperd does not mix DDL and DML in one transaction",
        "create the MappedInserter outside the transaction (it is all or nothing on its own)",
    )
}

/// Each [`ColumnMapping::column`] names a column of `table` and an input
/// of its exact type: stored through hyperd's assignment cast, an input of
/// another type would be cut (TEXT into VARCHAR(3)) or rounded (NUMERIC
/// into a smaller scale) without an error. Refused before anything is
/// made, as Tableau's Hyper API refuses such an inserter; an explicit
/// `CAST` in an expression says the conversion is meant.
fn check_plain_mappings(
    table: &TableDefinition,
    inputs: &TableDefinition,
    mappings: &[ColumnMapping],
) -> Result<()> {
    for m in mappings {
        let Some(column) = table.column_named(&m.column) else {
            return Err(Error::DefinitionMismatch {
                table: table.name().to_string(),
                column: Some(m.column.clone()),
                actual: "no such column".into(),
                given: "a mapping for it".into(),
            });
        };
        if m.expression.is_some() {
            continue;
        }
        let given = match inputs.column_named(&m.column) {
            None => "no input column of that name".to_owned(),
            Some(input) if input.sql_type() == column.sql_type() => continue,
            Some(input) => format!(
                "the input {}, which a plain mapping would store through hyperd's cast (cut or \
                 rounded): declare the input with the column's type, or map an expression with \
                 an explicit CAST",
                input.sql_type()
            ),
        };
        return Err(Error::DefinitionMismatch {
            table: table.name().to_string(),
            column: Some(m.column.clone()),
            actual: column.sql_type().to_string(),
            given,
        });
    }
    Ok(())
}

/// `INSERT INTO target ("a", "b") SELECT <expr or "a">, ... FROM "stage"`.
fn insert_select_sql(
    target: &TableName,
    stage: &str,
    mappings: &[ColumnMapping],
) -> Result<String> {
    let mut sql = format!("INSERT INTO {} (", target.to_sql()?);
    for (i, m) in mappings.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        push_identifier(&mut sql, &m.column)?;
    }
    sql.push_str(") SELECT ");
    for (i, m) in mappings.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        match &m.expression {
            Some(e) => sql.push_str(e),
            None => push_identifier(&mut sql, &m.column)?,
        }
    }
    sql.push_str(" FROM ");
    push_identifier(&mut sql, stage)?;
    Ok(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_select_quotes_columns_and_keeps_expressions() {
        let sql = insert_select_sql(
            &TableName::new("geo"),
            "stage",
            &[
                ColumnMapping::column("id"),
                ColumnMapping::expression("shape", "CAST(\"wkt\" AS TABLEAU.TABGEOGRAPHY)"),
            ],
        )
        .unwrap();
        assert_eq!(
            sql,
            "INSERT INTO \"geo\" (\"id\", \"shape\") SELECT \"id\", CAST(\"wkt\" AS TABLEAU.TABGEOGRAPHY) FROM \"stage\""
        );
    }
}

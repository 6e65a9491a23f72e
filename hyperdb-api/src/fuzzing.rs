//! Entry points for the project's fuzz targets (`fuzz/`), built only with
//! the `fuzzing` feature and hidden from the docs. The readers of what a
//! server sends back (row blocks, Arrow results) are crate-internal: the
//! API reaches them only through a connection, which a fuzz target cannot
//! afford per input. These functions run the same code the row streams
//! run, without the socket. Not part of the API; they may change at any
//! time.

use std::sync::Arc;

use hyperdb_api_core::protocol::backend::{FieldDescription, RowBlock};
use hyperdb_api_core::protocol::ops::RowEvent;

use crate::error::Result;
use crate::from_row::FromRow;
use crate::rows::{fetched_from_wire, RowCursor, Schema};
use crate::Row;

/// One row read as `T` by each reader a typed stream may use: they must
/// agree (the typed streams' documented promise).
#[derive(Debug)]
pub struct TypedReads<T> {
    /// The error-free first read (`RowCursor::try_read_current`); `None`
    /// sends a stream on to the checked read.
    pub unchecked: Option<T>,
    /// The checked read (`RowCursor::read_current`), the one whose value or
    /// error a stream hands out.
    pub checked: Result<T>,
    /// [`FromRow::from_row`] on the indexed row.
    pub by_index: Result<T>,
}

/// Reads `blocks`, the `DataRow`s of a result described by `fields`, as
/// the row streams do: each block checked against the columns, each row
/// read as `T` by every typed reader, then indexed and handed to `each`
/// (which returns whether to go on). Returns the first error that ends a
/// stream (a block that does not fit the columns, a malformed row) after
/// handing over the rows before it.
pub fn wire_rows<T: for<'r> FromRow<'r>>(
    fields: Vec<FieldDescription>,
    blocks: impl IntoIterator<Item = RowBlock>,
    mut each: impl FnMut(&Row, TypedReads<T>) -> bool,
) -> Result<()> {
    let schema = Schema::from_fields(fields);
    let mut cursor = RowCursor::new(schema.clone());
    let plan = cursor.plan::<T>();
    for block in blocks {
        cursor.release();
        cursor.take(fetched_from_wire(&schema, Ok(RowEvent::Rows(block))))?;
        while cursor.advance() {
            let unchecked = cursor.try_read_current::<T>(plan);
            // An outer error is a malformed row: it ends the stream.
            let checked = cursor.read_current::<T>(plan)?;
            cursor.index_current()?;
            let by_index = T::from_row(cursor.row());
            let reads = TypedReads {
                unchecked,
                checked,
                by_index,
            };
            if !each(cursor.row(), reads) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Reads `payloads`, the `CopyData` payloads of `COPY (...) TO STDOUT
/// WITH (FORMAT ARROWSTREAM)`, as `execute_query` does: decoded by the
/// Arrow reader (the end of input fed as the server's end of the result),
/// every batch read as rows in place and each row handed to `each` with
/// its typed reads (`each` returns whether to go on). Returns the Arrow schema, or the error that ended the
/// stream.
#[cfg(feature = "arrow")]
pub fn arrow_rows<T: for<'r> FromRow<'r>>(
    payloads: impl IntoIterator<Item = bytes::Bytes>,
    mut each: impl FnMut(&Row, TypedReads<T>) -> bool,
) -> Result<Option<arrow_schema::SchemaRef>> {
    use crate::arrow::{row_schema, ArrowDecoder};
    use crate::rows::fetched_from_arrow;

    let mut decoder = ArrowDecoder::default();
    let mut payloads = payloads.into_iter();
    let mut cursor: Option<(Arc<Schema>, RowCursor)> = None;
    loop {
        let step = match decoder.next_ready() {
            Some(step) => step,
            None => {
                match payloads.next() {
                    Some(payload) => decoder.push(payload),
                    None => {
                        if let Err(e) = decoder.end_input() {
                            return Err(decoder.fail(e));
                        }
                    }
                }
                continue;
            }
        };
        let Some(batch) = step else {
            return Ok(decoder.schema().cloned());
        };
        let batch = batch?;
        let (schema, cursor) = cursor.get_or_insert_with(|| {
            let arrow = decoder.schema().cloned().unwrap_or_else(|| batch.schema());
            let schema = row_schema(&arrow);
            (schema.clone(), RowCursor::new(schema))
        });
        cursor.release();
        cursor.take(fetched_from_arrow(schema, Some(Ok(batch)), || None))?;
        let plan = cursor.plan::<T>();
        while cursor.advance() {
            let unchecked = cursor.try_read_current::<T>(plan);
            let checked = cursor.read_current::<T>(plan)?;
            let by_index = T::from_row(cursor.row());
            let reads = TypedReads {
                unchecked,
                checked,
                by_index,
            };
            if !each(cursor.row(), reads) {
                return Ok(decoder.schema().cloned());
            }
        }
    }
}

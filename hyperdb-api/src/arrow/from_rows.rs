//! A `DataRow` result as Arrow record batches.
//!
//! Why: a caller that reads every result as Arrow (a binding that hands
//! columns to another runtime) still meets results hyperd does not send as
//! Arrow: queries with bound parameters (COPY takes none), statements other
//! than plain queries, and values Arrow cannot express. Their rows are
//! gathered here by the row inserters' own column builder ([`ArrowRows`]),
//! so both routes give batches of one schema: the one hyperd's Arrow stream
//! would have had (DATE as Date64, `hyper:*` field metadata).
//!
//! One value has a HyperBinary form and no Arrow one that hyperd's Arrow
//! stream would send: a TIMESTAMP or TIMESTAMPTZ after 294247-01-10
//! 04:00:54.775807, where Arrow's `i64` microseconds since 1970 end (up to
//! hyperd's greatest, 294276-12-31 23:59:59.999999, its `infinity`). hyperd
//! refuses those on its Arrow stream (22008), and so do batches meant as
//! Arrow ([`PastArrow::Refuse`]). Batches a caller reads back as rows carry
//! them wrapped around `i64` instead ([`PastArrow::Wrap`]): every wrapped
//! value lies below hyperd's least timestamp (4713-01-01 00:00:00 BC), so
//! adding 2^64 to such a value gives the true one.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Date32Array, Date64Array, RecordBatch, RecordBatchOptions};
use arrow_schema::{Field, SchemaRef};
use bytes::{BufMut, BytesMut};
use hyperdb_api_core::error::{DbError, SqlState};
use hyperdb_api_core::types::{
    oid, ColumnType, FromHyperBinary, SqlType, Timestamp, TimestampTz, ToHyperBinary,
};

use super::row_batch::BATCH_ROWS;
use super::schema::arrow_schema;
use super::ArrowRows;
use crate::error::{Error, Result};
use crate::insert::encoder::RowSink;
use crate::rows::{Row, Schema};
use crate::table_definition::{ColumnDefinition, TableDefinition};

const MILLIS_PER_DAY: i64 = 86_400_000;

/// Where a batch ends in bytes of values (or at 64K rows): about what
/// hyperd's own Arrow stream puts in a batch (~1 MiB), so that a result
/// holds as much memory on either route (a reader's read-ahead counts
/// batches; the inserters' 16 MiB made 32 of them ~500 MiB).
const READ_BATCH_BYTES: usize = 1 << 20;

/// What a batch does with a timestamp Arrow's microseconds cannot hold
/// (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PastArrow {
    /// Fails the read with 22008, as hyperd's Arrow stream does.
    Refuse,
    /// Carries it wrapped around `i64`, for readers of rows.
    Wrap,
}

/// Gathers the rows of one result into record batches.
#[derive(Debug)]
pub(crate) struct RowBatcher {
    /// `None` for a result without columns.
    sink: Option<ArrowRows>,
    columns: Vec<ColumnType>,
    /// Which columns are UUIDs, carried as their text (TEXT columns of the
    /// sink, marked in the schema's field metadata).
    uuids: Vec<bool>,
    schema: SchemaRef,
    /// Unused: `ArrowRows` writes no frames when batches are taken directly.
    frames: BytesMut,
    past_arrow: PastArrow,
    /// Rows not yet handed out of a result without columns.
    bare_rows: usize,
    /// Which fields an adopted schema declares NOT NULL (see `adopt`).
    lent_not_null: Vec<bool>,
    /// A NULL came in such a field since the last `take_lent_broken`.
    lent_broken: bool,
}

impl RowBatcher {
    /// Fails when a column has a type that has no Arrow form. A result
    /// without columns has an empty schema, and batches that carry only a
    /// row count: `SELECT FROM t` has rows (hyperd's Arrow stream counts
    /// them too), a statement without a result has none, and no batch.
    pub(crate) fn new(result: &Schema, past_arrow: PastArrow) -> Result<RowBatcher> {
        if result.is_empty() {
            return Ok(RowBatcher {
                sink: None,
                columns: Vec::new(),
                uuids: Vec::new(),
                schema: Arc::new(arrow_schema::Schema::empty()),
                frames: BytesMut::new(),
                past_arrow,
                bare_rows: 0,
                lent_not_null: Vec::new(),
                lent_broken: false,
            });
        }
        // The sink's columns have positional names: a result may repeat a
        // name (the `id` of each side of a join), which a table may not.
        // The batches' fields get the result's own names back.
        let mut table = TableDefinition::new("result");
        let uuids: Vec<bool> = result
            .columns()
            .iter()
            .map(|c| c.type_oid() == oid::UUID)
            .collect();
        for (i, c) in result.columns().iter().enumerate() {
            let ty = match c.sql_type() {
                Some(ty) => *ty,
                None if uuids[i] => SqlType::Text,
                None => return Err(no_arrow_form(c.name(), c.type_oid())),
            };
            table.add_column(ColumnDefinition::nullable(format!("c{i}"), ty));
        }
        let positional = arrow_schema(&table)?;
        let fields: Vec<Field> = positional
            .fields()
            .iter()
            .zip(result.columns())
            .zip(&uuids)
            .map(|((f, c), &uuid)| {
                let field = f.as_ref().clone().with_name(c.name());
                if uuid {
                    field.with_metadata(uuid_metadata())
                } else {
                    field
                }
            })
            .collect();
        let schema = arrow_schema::Schema::new_with_metadata(fields, positional.metadata().clone());
        Ok(RowBatcher {
            sink: Some(ArrowRows::new(&table)?.with_batch_bytes(READ_BATCH_BYTES)),
            columns: table.column_types(),
            uuids,
            schema: Arc::new(schema),
            frames: BytesMut::new(),
            past_arrow,
            bare_rows: 0,
            lent_not_null: Vec::new(),
            lent_broken: false,
        })
    }

    /// The batches' schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Takes `arrow` as the batches' schema when its fields have the same
    /// names and types: the schema hyperd's Arrow stream gave the same
    /// statement, with the nullability `DataRow`s do not carry. That
    /// nullability may be out of date (the table was made again with a
    /// nullable column, another database attached): a NULL in a field it
    /// declares NOT NULL makes the field nullable from that batch on, and
    /// [`take_lent_broken`](Self::take_lent_broken) says so, for the
    /// statement's route entry to be forgotten. It once failed the read,
    /// and every later one on the connection.
    pub(crate) fn adopt(&mut self, arrow: &SchemaRef) {
        let (ours, theirs) = (self.schema.fields(), arrow.fields());
        let same = ours.len() == theirs.len()
            && ours
                .iter()
                .zip(theirs)
                .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
        if same {
            self.schema = arrow.clone();
            self.lent_not_null = theirs.iter().map(|f| !f.is_nullable()).collect();
        }
    }

    /// Whether a NULL came in a field the adopted schema declared NOT NULL
    /// since the last call.
    pub(crate) fn take_lent_broken(&mut self) -> bool {
        std::mem::take(&mut self.lent_broken)
    }

    /// `schema` with field `i` nullable: an adopted NOT NULL field held a
    /// NULL.
    #[cold]
    fn relaxed(schema: &SchemaRef, i: usize) -> SchemaRef {
        let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
        fields[i] = Arc::new(fields[i].as_ref().clone().with_nullable(true));
        let metadata = schema.metadata().clone();
        Arc::new(arrow_schema::Schema::new_with_metadata(fields, metadata))
    }

    /// Adds a row; returns a batch when one is full.
    pub(crate) fn push(&mut self, row: &Row) -> Result<Option<RecordBatch>> {
        let Some(sink) = self.sink.as_mut() else {
            self.bare_rows += 1;
            if self.bare_rows == BATCH_ROWS {
                return self.take();
            }
            return Ok(None);
        };
        let mut text = [0u8; UUID_TEXT_LEN];
        for (i, column) in self.columns.iter().enumerate() {
            let name = || row.schema().columns()[i].name().to_owned();
            let mut bytes = row.raw(i)?;
            if bytes.is_none() && self.lent_not_null.get(i) == Some(&true) {
                self.lent_not_null[i] = false;
                self.lent_broken = true;
                self.schema = Self::relaxed(&self.schema, i);
            }
            if self.uuids[i] {
                if let Some(raw) = bytes {
                    let Ok(uuid) = <&[u8; 16]>::try_from(raw) else {
                        sink.discard_row(&mut self.frames, i);
                        return Err(Error::Conversion {
                            column: name(),
                            source: hyperdb_api_core::Error::conversion(format!(
                                "a UUID value of {} bytes, expected 16",
                                raw.len()
                            )),
                        });
                    };
                    bytes = Some(uuid_text(uuid, &mut text));
                }
            }
            let value = Raw {
                bytes,
                width: column.sql_type.fixed_width(),
            };
            if let Err(e) = sink.put(&mut self.frames, i, column, &value) {
                sink.discard_row(&mut self.frames, i);
                return Err(Error::Conversion {
                    column: name(),
                    source: e,
                });
            }
            // The sink flags what hyperd's Arrow reader refuses. Of that,
            // TIME 24:00:00 has an Arrow form; a long interval has none; the
            // latest timestamps wrap, which only a reader of rows may take.
            if sink.take_hold() {
                let refused = match column.sql_type {
                    SqlType::Interval => Some(Error::Conversion {
                        column: name(),
                        source: hyperdb_api_core::Error::invalid_input(
                            "an INTERVAL with more than 2^63 nanoseconds of time has no Arrow form",
                        ),
                    }),
                    SqlType::Timestamp | SqlType::TimestampTz
                        if self.past_arrow == PastArrow::Refuse =>
                    {
                        Some(past_arrow(&column.sql_type, row.raw(i)?, name()))
                    }
                    _ => None,
                };
                if let Some(e) = refused {
                    sink.discard_row(&mut self.frames, i + 1);
                    return Err(e);
                }
            }
        }
        if sink.row_done() {
            return self.take();
        }
        Ok(None)
    }

    /// The rows not yet handed out, if any.
    pub(crate) fn finish(&mut self) -> Result<Option<RecordBatch>> {
        self.take()
    }

    fn take(&mut self) -> Result<Option<RecordBatch>> {
        if self.sink.is_none() && self.bare_rows > 0 {
            let rows = std::mem::take(&mut self.bare_rows);
            let options = RecordBatchOptions::new().with_row_count(Some(rows));
            let batch = RecordBatch::try_new_with_options(self.schema.clone(), vec![], &options)?;
            return Ok(Some(batch));
        }
        let Some(batch) = self
            .sink
            .as_mut()
            .map(ArrowRows::take_batch)
            .transpose()?
            .flatten()
        else {
            return Ok(None);
        };
        let columns = batch
            .columns()
            .iter()
            .zip(&self.columns)
            .map(|(array, column)| match column.sql_type {
                SqlType::Date => date64(array),
                _ => array.clone(),
            })
            .collect();
        Ok(Some(RecordBatch::try_new(self.schema.clone(), columns)?))
    }
}

/// The length of a UUID's text form (`8-4-4-4-12` hex digits).
const UUID_TEXT_LEN: usize = 36;

/// The field metadata that marks a UUID carried as its text
/// ([`arrow::sql_type_name`](super::sql_type_name) reads it back).
fn uuid_metadata() -> std::collections::HashMap<String, String> {
    std::collections::HashMap::from([(super::HYPER_TYPE_KEY.to_owned(), "UUID".to_owned())])
}

/// A UUID's 16 bytes as hyperd writes them as text (`uuid::text`):
/// lowercase hex in groups of 8-4-4-4-12, into `out`. hyperd sends a UUID
/// as one little-endian 128-bit number, so its text reads the bytes from
/// the last (measured: `'a0eebc99-…-6bb9bd380a11'::uuid` arrives as
/// `11 0a 38 bd … ee a0`).
fn uuid_text<'a>(uuid: &[u8; 16], out: &'a mut [u8; UUID_TEXT_LEN]) -> &'a [u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut at = 0;
    for (i, byte) in uuid.iter().rev().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out[at] = b'-';
            at += 1;
        }
        out[at] = HEX[usize::from(byte >> 4)];
        out[at + 1] = HEX[usize::from(byte & 0xf)];
        at += 2;
    }
    out
}

/// A result column of a type hyperdb-api does not map (REGCLASS, say),
/// naming the way around it. Not an ARRAY: hyperd describes those as
/// Arrow lists, which are refused before this with their own hint.
fn no_arrow_form(column: &str, oid: u32) -> Error {
    Error::UnsupportedType {
        column: column.to_owned(),
        type_name: format!("type OID {oid}"),
        message: "hyperdb-api reads no value of this type, as rows or as Arrow; cast the \
                  column to TEXT in the query (`col::TEXT`)"
            .into(),
    }
}

/// hyperd's own refusal of a timestamp past Arrow's range (22008), naming
/// the column and the value: callers check one SQLSTATE whichever route
/// the result took.
fn past_arrow(ty: &SqlType, raw: Option<&[u8]>, column: String) -> Error {
    let value = raw.and_then(|raw| match ty {
        SqlType::TimestampTz => TimestampTz::decode_hyper(ty, raw)
            .ok()
            .map(|t| t.to_string()),
        _ => Timestamp::decode_hyper(ty, raw).ok().map(|t| t.to_string()),
    });
    let mut db = DbError::new(
        SqlState::from_code("22008"),
        format!(
            "{ty} {} in column \"{column}\" has no Arrow form: Arrow's microseconds since 1970 end at 294247-01-10 04:00:54.775807",
            value.as_deref().unwrap_or("value"),
        ),
    );
    db.hint = Some(
        "a row reader takes it (execute_query, Place::query_row_batches; Node: query, queryAll)"
            .into(),
    );
    db.column = Some(column);
    Error::server(db)
}

/// The inserter's DATE (Date32) as hyperd's Arrow stream sends it (Date64).
fn date64(array: &ArrayRef) -> ArrayRef {
    match array.as_any().downcast_ref::<Date32Array>() {
        Some(days) => Arc::new(Date64Array::new(
            days.values()
                .iter()
                .map(|&d| i64::from(d) * MILLIS_PER_DAY)
                .collect(),
            days.nulls().cloned(),
        )),
        None => array.clone(),
    }
}

/// A `DataRow` field as it came: HyperBinary bytes, so they go into the
/// column as they are (with the length prefix the column keeps for text).
struct Raw<'a> {
    bytes: Option<&'a [u8]>,
    width: Option<usize>,
}

impl ToHyperBinary for Raw<'_> {
    fn accepts(_: &SqlType) -> bool {
        true
    }

    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> hyperdb_api_core::Result<()> {
        let Some(bytes) = self.bytes else {
            return Ok(());
        };
        match self.width {
            Some(w) if w != bytes.len() => {
                return Err(hyperdb_api_core::Error::conversion(format!(
                    "a {ty} value of {} bytes, expected {w}",
                    bytes.len()
                )))
            }
            Some(_) => {}
            None => {
                let len = u32::try_from(bytes.len()).map_err(|_| {
                    hyperdb_api_core::Error::conversion("a value longer than 4 GiB")
                })?;
                buf.put_u32_le(len);
            }
        }
        buf.extend_from_slice(bytes);
        Ok(())
    }

    fn is_null(&self) -> bool {
        self.bytes.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_reads_as_the_text_of_its_little_endian_bytes() {
        let mut bytes: [u8; 16] = [
            0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38,
            0x0a, 0x11,
        ];
        bytes.reverse();
        let mut out = [0u8; UUID_TEXT_LEN];
        assert_eq!(
            uuid_text(&bytes, &mut out),
            b"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
        assert_eq!(
            uuid_text(&[0xff; 16], &mut out),
            b"ffffffff-ffff-ffff-ffff-ffffffffffff"
        );
    }
}

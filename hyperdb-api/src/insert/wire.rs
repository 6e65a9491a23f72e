//! What a row inserter sends: HyperBinary or Arrow. Rows, checks and errors
//! are the same either way; only the bytes on the socket differ.

use bytes::BytesMut;
use hyperdb_api_core::types::{ColumnType, ToHyperBinary};

use crate::error::Result;
use crate::insert::copy_tx::CopySql;
use crate::insert::encoder::{
    copy_sql, FrameError, HeldRows, HyperBinaryFrames, RowEncoder, RowSink,
};
use crate::table_definition::TableDefinition;

/// The COPY format of an [`Inserter`](crate::Inserter),
/// [`AsyncInserter`](crate::AsyncInserter) or
/// [`MappedInserter`](crate::MappedInserter).
///
/// hyperd parses HyperBinary on one thread but ingests Arrow in parallel:
/// on a 2-core machine the same rows go in about 1.4x faster as Arrow, so
/// that is the default when the `arrow` feature is on. The stored values
/// are identical (the round-trip tests run both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InsertFormat {
    /// `FORMAT HYPERBINARY`: Hyper's row format, rows written straight into
    /// the send buffer.
    HyperBinary,
    /// `FORMAT ARROWSTREAM`: rows gathered into Arrow record batches of
    /// 64Ki rows (or 16 MiB), each written out whole: the flush threshold
    /// does not split a batch, and the client holds up to about two
    /// batches' bytes at once. Every Hyper type and value can be sent: a
    /// batch holding a value Arrow cannot carry (see the
    /// [module docs](crate::insert)) goes in a HyperBinary COPY of its own.
    #[cfg(feature = "arrow")]
    ArrowStream,
}

impl Default for InsertFormat {
    fn default() -> InsertFormat {
        #[cfg(feature = "arrow")]
        return InsertFormat::ArrowStream;
        #[cfg(not(feature = "arrow"))]
        return InsertFormat::HyperBinary;
    }
}

/// The sink of the format chosen: one `match` per value, well predicted.
#[derive(Debug)]
pub(crate) enum Wire {
    HyperBinary(HyperBinaryFrames),
    #[cfg(feature = "arrow")]
    Arrow(Box<crate::arrow::ArrowRows>),
}

/// The COPY statements for `format` and the row encoder: the COPY, and the
/// HyperBinary one for rows the format holds back (`RowSink::take_held`).
/// After the COPY has started, call `RowEncoder::start_stream` on the send
/// buffer.
pub(crate) fn row_encoder(
    table: &TableDefinition,
    format: InsertFormat,
) -> Result<(CopySql, RowEncoder<Wire>)> {
    let hyperbinary = copy_sql(table)?;
    let (wire, sql) = match format {
        InsertFormat::HyperBinary => (
            Wire::HyperBinary(HyperBinaryFrames::new()),
            CopySql {
                copy: hyperbinary,
                held: None,
                stream_checked: false,
            },
        ),
        #[cfg(feature = "arrow")]
        InsertFormat::ArrowStream => (
            Wire::Arrow(Box::new(crate::arrow::ArrowRows::new(table)?)),
            CopySql {
                copy: crate::arrow::copy_sql(table)?,
                held: Some(hyperbinary),
                stream_checked: true,
            },
        ),
    };
    Ok((sql, RowEncoder::with_sink(table, wire)?))
}

macro_rules! each {
    ($self:ident, $sink:ident => $e:expr) => {
        match $self {
            Wire::HyperBinary($sink) => $e,
            #[cfg(feature = "arrow")]
            Wire::Arrow($sink) => $e,
        }
    };
}

impl RowSink for Wire {
    fn start_stream(&mut self, buf: &mut BytesMut) {
        each!(self, s => s.start_stream(buf))
    }

    #[inline]
    fn begin_row(&mut self, buf: &mut BytesMut) {
        each!(self, s => s.begin_row(buf))
    }

    /// Always inlined, with `ArrowRows::put`: where the compiler left
    /// it out of line (the `hot_paths` criterion bench), every value paid
    /// a call that saved six registers, and a 1M-row `Inserter` took
    /// ~20 ms instead of ~9 ms.
    #[inline(always)]
    fn put(
        &mut self,
        buf: &mut BytesMut,
        i: usize,
        column: &ColumnType,
        value: &dyn ToHyperBinary,
    ) -> hyperdb_api_core::Result<()> {
        each!(self, s => s.put(buf, i, column, value))
    }

    fn discard_row(&mut self, buf: &mut BytesMut, values: usize) {
        each!(self, s => s.discard_row(buf, values))
    }

    #[inline]
    fn end_row(&mut self, buf: &mut BytesMut) -> Result<()> {
        each!(self, s => s.end_row(buf))
    }

    #[inline]
    fn frame_full(&self, buf: &BytesMut) -> bool {
        each!(self, s => s.frame_full(buf))
    }

    fn close_frame(&mut self, buf: &mut BytesMut) -> Result<(), FrameError> {
        each!(self, s => s.close_frame(buf))
    }

    fn finish(&mut self, buf: &mut BytesMut) -> Result<(), FrameError> {
        each!(self, s => s.finish(buf))
    }

    fn set_flush_threshold(&mut self, bytes: usize) {
        each!(self, s => s.set_flush_threshold(bytes))
    }

    fn take_held(&mut self) -> Option<HeldRows> {
        each!(self, s => s.take_held())
    }

    fn end_stream(&mut self, buf: &mut BytesMut) -> Result<()> {
        each!(self, s => s.end_stream(buf))
    }

    fn abandon(&mut self) {
        each!(self, s => s.abandon())
    }
}

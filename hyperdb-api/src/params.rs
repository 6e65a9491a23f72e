//! Bound query parameters (`$1`, `$2`, ...) in PostgreSQL binary format
//! (NUMERIC as text: see `ToPgBinary::param_format`), encoded once into
//! one buffer for both connection types.

use std::ops::Range;

use bytes::BytesMut;
use hyperdb_api_core::protocol::ops::{
    QueryRequest, FORMAT_BINARY, FORMAT_HYPER_BINARY, FORMAT_TEXT,
};
use hyperdb_api_core::types::{IsNull, ToPgBinary};

use crate::error::{Error, Result};

/// Parameters encoded for one Bind.
#[derive(Debug)]
pub(crate) struct Params {
    buf: BytesMut,
    spans: Vec<Option<Range<usize>>>,
    types: Vec<u32>,
    /// One format a parameter; empty when all are binary.
    formats: Vec<i16>,
}

impl Params {
    pub(crate) fn encode(values: &[&dyn ToPgBinary]) -> Result<Params> {
        let mut p = Params {
            buf: BytesMut::new(),
            spans: Vec::with_capacity(values.len()),
            types: Vec::with_capacity(values.len()),
            formats: Vec::new(),
        };
        for (i, v) in values.iter().enumerate() {
            let start = p.buf.len();
            match v.encode_pg_binary(&mut p.buf) {
                Ok(IsNull::No) => p.spans.push(Some(start..p.buf.len())),
                Ok(IsNull::Yes) => {
                    p.buf.truncate(start);
                    p.spans.push(None);
                }
                Err(e) => {
                    return Err(Error::invalid_argument(
                        format!("parameter ${}", i + 1),
                        e.message(),
                    ))
                }
            }
            p.types.push(v.param_type_oid());
            // Listed from the first parameter that is not binary on (the
            // ones before it binary); with none, nothing is allocated and
            // the Bind names one format for all.
            let format = v.param_format();
            if format != FORMAT_BINARY || !p.formats.is_empty() {
                p.formats.resize(i, FORMAT_BINARY);
                p.formats.push(format);
            }
        }
        Ok(p)
    }

    /// Declares each parameter whose type `declared` gives (not 0) as
    /// that type, the others as their values' types.
    pub(crate) fn declare(&mut self, declared: &[u32]) {
        for (ty, &want) in self.types.iter_mut().zip(declared) {
            if want != 0 {
                *ty = want;
            }
        }
    }

    /// Parameter `i`'s bytes, `None` for NULL.
    pub(crate) fn value(&self, i: usize) -> Option<&[u8]> {
        self.spans.get(i)?.clone().map(|r| &self.buf[r])
    }

    /// Sends parameter `i` in text form (format 0), for a type hyperd
    /// reads only so (GEOGRAPHY); its bytes must be text already.
    pub(crate) fn send_as_text(&mut self, i: usize) {
        if self.formats.is_empty() {
            self.formats.resize(self.spans.len(), FORMAT_BINARY);
        }
        if let Some(f) = self.formats.get_mut(i) {
            *f = FORMAT_TEXT;
        }
    }

    /// The parameters' Bind formats (empty: all binary).
    pub(crate) fn formats(&self) -> &[i16] {
        &self.formats
    }

    /// The values as the protocol layer takes them.
    pub(crate) fn slices(&self) -> Vec<Option<&[u8]>> {
        self.spans
            .iter()
            .map(|s| s.clone().map(|r| &self.buf[r]))
            .collect()
    }

    /// A HyperBinary-result query of `sql` over these parameters, which
    /// hyperd prepares: a top-level `VALUES` of several rows is refused here
    /// ([`crate::statement::refuse_values_of_several_rows`]).
    pub(crate) fn request<'a>(
        &'a self,
        sql: &'a str,
        slices: &'a [Option<&'a [u8]>],
    ) -> Result<QueryRequest<'a>> {
        crate::statement::refuse_values_of_several_rows(sql)?;
        Ok(QueryRequest {
            sql,
            param_types: &self.types,
            params: slices,
            param_formats: &self.formats,
            result_format: FORMAT_HYPER_BINARY,
        })
    }
}

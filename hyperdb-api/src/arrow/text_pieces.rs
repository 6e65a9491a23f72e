//! [`text_pieces`]: a record batch cut into row ranges whose text columns
//! each hold at most a given number of bytes.
//!
//! Why: a consumer that turns each text column of a batch into one string
//! (the Node binding does: one string creation per batch, sliced by
//! offsets) meets the longest string its language allows (2^29 - 24 units
//! in V8). Batches of hyperd's Arrow stream hold about 1 MiB, but one
//! value may hold up to ~1.5 GB, and batches with it would fail as a whole.
//! Cut here, every value that fits on its own reaches the consumer, and one
//! that does not is named.

use arrow_array::cast::AsArray;
use arrow_array::RecordBatch;
use arrow_schema::DataType;

use crate::error::{Error, Result};

/// `batch` as consecutive row ranges (zero-copy slices) in which no text
/// column holds more than `max_bytes` bytes of UTF-8; `batch` itself when
/// it already does. A single value over `max_bytes` is
/// [`Error::ValueTooLarge`] (54000), `why` saying what the limit is.
pub fn text_pieces(batch: &RecordBatch, max_bytes: usize, why: &str) -> Result<Vec<RecordBatch>> {
    let texts: Vec<(usize, &[i32])> = batch
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.data_type() == &DataType::Utf8)
        .map(|(i, c)| (i, c.as_string::<i32>().value_offsets()))
        .collect();
    let total = |o: &[i32], from: usize, to: usize| (o[to] - o[from]) as usize;
    if texts
        .iter()
        .all(|(_, o)| total(o, 0, batch.num_rows()) <= max_bytes)
    {
        return Ok(vec![batch.clone()]);
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for row in 0..batch.num_rows() {
        for &(column, o) in &texts {
            let bytes = total(o, row, row + 1);
            if bytes > max_bytes {
                return Err(Error::ValueTooLarge {
                    column: batch.schema().field(column).name().clone(),
                    bytes,
                    limit: max_bytes,
                    message: why.to_owned(),
                });
            }
        }
        if texts
            .iter()
            .any(|(_, o)| total(o, start, row + 1) > max_bytes)
        {
            pieces.push(batch.slice(start, row - start));
            start = row;
        }
    }
    pieces.push(batch.slice(start, batch.num_rows() - start));
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int32Array, StringArray};
    use std::sync::Arc;

    fn batch(texts: &[Option<&str>]) -> RecordBatch {
        let ids: ArrayRef = Arc::new(Int32Array::from_iter_values(0..texts.len() as i32));
        let s: ArrayRef = Arc::new(StringArray::from(texts.to_vec()));
        RecordBatch::try_from_iter([("id", ids), ("s", s)]).unwrap()
    }

    fn rows(pieces: &[RecordBatch]) -> Vec<usize> {
        pieces.iter().map(RecordBatch::num_rows).collect()
    }

    #[test]
    fn a_batch_within_the_limit_stays_whole() {
        let b = batch(&[Some("abc"), None, Some("de")]);
        assert_eq!(rows(&text_pieces(&b, 5, "").unwrap()), vec![3]);
    }

    #[test]
    fn a_batch_over_the_limit_is_cut_between_rows_in_order() {
        let b = batch(&[
            Some("aaa"),
            Some("bb"),
            None,
            Some("cccc"),
            Some("d"),
            Some(""),
        ]);
        let pieces = text_pieces(&b, 5, "").unwrap();
        assert_eq!(rows(&pieces), vec![3, 3]);
        let ids: Vec<i32> = pieces
            .iter()
            .flat_map(|p| {
                p.column(0)
                    .as_primitive::<arrow_array::types::Int32Type>()
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(ids, (0..6).collect::<Vec<_>>(), "every row once, in order");
        for p in &pieces {
            let s = p.column(1).as_string::<i32>();
            let o = s.value_offsets();
            assert!(o[o.len() - 1] - o[0] <= 5);
        }
    }

    #[test]
    fn a_value_over_the_limit_is_named() {
        let b = batch(&[Some("ok"), Some("toolong")]);
        let e = text_pieces(&b, 5, "the longest string X holds").unwrap_err();
        assert_eq!(e.sqlstate(), "54000");
        let text = e.to_string();
        assert!(
            text.contains("column `s`") && text.contains("7 bytes"),
            "{text}"
        );
        assert!(text.contains("the longest string X holds"), "{text}");
    }
}

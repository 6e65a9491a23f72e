//! lineitem's Arrow side (feature `arrow`): the record batches the Arrow
//! inserters send, and `query_arrow` reads that fold every column of every
//! batch into the check.

use std::sync::Arc;

use hyperdb_api::arrow_array::cast::AsArray;
use hyperdb_api::arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Int32Type, Int64Type,
};
use hyperdb_api::arrow_array::{
    Array, ArrayRef, Date32Array, Date64Array, Decimal128Array, Int32Array, Int64Array,
    RecordBatch, StringArray,
};
use hyperdb_api::arrow_schema::DataType;
use hyperdb_api::types::Date;
use hyperdb_api::AsyncConnection;

use super::{async_reads, timed};
use crate::data::{Result, Span, CHUNK_ROWS};
use crate::lineitem_data::{self as li, Check, Line};
use crate::Env;

/// Unix epoch as a Julian day.
const UNIX_JD: i32 = 2_440_588;

/// The rows of `span` as record batches of at most [`CHUNK_ROWS`] rows, in
/// the types `arrow_schema` gives the table.
pub fn batches(span: Span) -> Result<Vec<RecordBatch>> {
    let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&li::table(li::TABLE))?);
    let mut out = Vec::new();
    for part in span.chunks(CHUNK_ROWS) {
        let lines: Vec<Line<'static>> = (part.start..part.end).map(|i| li::row(i as i64)).collect();
        let int = |f: fn(&Line<'_>) -> i32| -> ArrayRef {
            Arc::new(Int32Array::from_iter_values(lines.iter().map(f)))
        };
        let num = |f: fn(&Line<'_>) -> i64| -> Result<ArrayRef> {
            let a = Decimal128Array::from_iter_values(lines.iter().map(|l| i128::from(f(l))))
                .with_precision_and_scale(12, 2)?;
            Ok(Arc::new(a))
        };
        let text = |f: fn(&Line<'static>) -> &'static str| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(lines.iter().map(f)))
        };
        let date = |i: usize, f: fn(&Line<'_>) -> Date| -> Result<ArrayRef> {
            let days = lines.iter().map(|l| f(l).julian_day() - UNIX_JD);
            Ok(match schema.field(i).data_type() {
                DataType::Date32 => Arc::new(Date32Array::from_iter_values(days)),
                DataType::Date64 => Arc::new(Date64Array::from_iter_values(
                    days.map(|d| i64::from(d) * 86_400_000),
                )),
                other => return Err(format!("DATE as Arrow {other}?").into()),
            })
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(
                lines.iter().map(|l| l.orderkey),
            )),
            int(|l| l.partkey),
            int(|l| l.suppkey),
            int(|l| l.linenumber),
            num(|l| l.quantity)?,
            num(|l| l.extendedprice)?,
            num(|l| l.discount)?,
            num(|l| l.tax)?,
            text(|l| l.returnflag),
            text(|l| l.linestatus),
            date(10, |l| l.shipdate)?,
            date(11, |l| l.commitdate)?,
            date(12, |l| l.receiptdate)?,
            text(|l| l.shipinstruct),
            text(|l| l.shipmode),
            text(|l| l.comment),
        ];
        out.push(RecordBatch::try_new(schema.clone(), columns)?);
    }
    Ok(out)
}

/// A DATE column's values as Julian days, whichever Arrow date type it has.
enum Dates<'a> {
    Days(&'a [i32]),
    Millis(&'a [i64]),
}

impl Dates<'_> {
    /// The sum of the column's Julian days.
    fn sum(&self) -> i64 {
        let (n, days) = match self {
            Dates::Days(d) => (d.len(), d.iter().map(|&x| i64::from(x)).sum::<i64>()),
            Dates::Millis(m) => (m.len(), m.iter().map(|&x| x / 86_400_000).sum::<i64>()),
        };
        days + n as i64 * i64::from(UNIX_JD)
    }

    #[inline]
    fn get(&self, i: usize) -> Date {
        Date::from_julian_day(
            UNIX_JD
                + match self {
                    Dates::Days(d) => d[i],
                    Dates::Millis(m) => (m[i] / 86_400_000) as i32,
                },
        )
    }
}

/// Folds one result batch into `check`, reading every column.
pub fn add_batch(check: &mut Check, batch: &RecordBatch) -> Result<()> {
    if batch.num_columns() != 16 {
        return Err(format!("lineitem batch has {} columns", batch.num_columns()).into());
    }
    if batch.columns().iter().any(|c| c.null_count() > 0) {
        return Err("lineitem batch has NULLs; the table has none".into());
    }
    let col = |i: usize| batch.column(i);
    let wrong = |i: usize| format!("lineitem column {i} is Arrow {}", col(i).data_type());
    let i64s = |i: usize| {
        col(i)
            .as_primitive_opt::<Int64Type>()
            .map(|a| a.values().as_ref())
            .ok_or_else(|| wrong(i))
    };
    let i32s = |i: usize| {
        col(i)
            .as_primitive_opt::<Int32Type>()
            .map(|a| a.values().as_ref())
            .ok_or_else(|| wrong(i))
    };
    let nums = |i: usize| {
        col(i)
            .as_primitive_opt::<Decimal128Type>()
            .filter(|a| a.scale() == 2)
            .map(|a| a.values().as_ref())
            .ok_or_else(|| wrong(i))
    };
    let texts = |i: usize| col(i).as_string_opt::<i32>().ok_or_else(|| wrong(i));
    let dates = |i: usize| {
        if let Some(a) = col(i).as_primitive_opt::<Date32Type>() {
            Ok(Dates::Days(a.values().as_ref()))
        } else if let Some(a) = col(i).as_primitive_opt::<Date64Type>() {
            Ok(Dates::Millis(a.values().as_ref()))
        } else {
            Err(wrong(i))
        }
    };
    let (ok, pk, sk, ln) = (i64s(0)?, i32s(1)?, i32s(2)?, i32s(3)?);
    let (q, p, d, t) = (nums(4)?, nums(5)?, nums(6)?, nums(7)?);
    let (rf, ls) = (texts(8)?, texts(9)?);
    let (sd, cd, rd) = (dates(10)?, dates(11)?, dates(12)?);
    let (si, sm, c) = (texts(13)?, texts(14)?, texts(15)?);
    // The sums of `Check::add`, column by column (what a columnar reader
    // does), then the sampled rows value by value.
    let cents = |v: i128| i64::try_from(v).unwrap_or(-1);
    let sum32 = |v: &[i32]| v.iter().map(|&x| i64::from(x)).sum::<i64>();
    let sum128 = |v: &[i128]| v.iter().sum::<i128>();
    let first_bytes = |a: &StringArray| -> i64 {
        let (offsets, bytes) = (a.value_offsets(), a.value_data());
        offsets
            .windows(2)
            .map(|w| match w[1] > w[0] {
                true => i64::from(bytes[w[0] as usize]),
                false => 0,
            })
            .sum()
    };
    let last_bytes = |a: &StringArray| -> i64 {
        let (offsets, bytes) = (a.value_offsets(), a.value_data());
        offsets
            .windows(2)
            .map(|w| match w[1] > w[0] {
                true => i64::from(bytes[w[1] as usize - 1]),
                false => 0,
            })
            .sum()
    };
    let offsets = c.value_offsets();
    let mut part = Check {
        rows: batch.num_rows() as u64,
        sum_orderkey: ok.iter().sum(),
        sum_ints: sum32(pk) + sum32(sk) + sum32(ln),
        sum_quantity: cents(sum128(q)),
        sum_price: cents(sum128(p)),
        sum_discount_tax: cents(sum128(d) + sum128(t)),
        sum_days: sd.sum() + cd.sum() + rd.sum(),
        sum_comment_len: i64::from(offsets[offsets.len() - 1] - offsets[0]),
        sum_text_bytes: first_bytes(rf)
            + first_bytes(ls)
            + first_bytes(si)
            + first_bytes(sm)
            + first_bytes(c)
            + last_bytes(c),
        sampled: 0,
        bad: 0,
    };
    for i in 0..batch.num_rows() {
        if ok[i] % li::SAMPLE != 0 {
            continue;
        }
        part.sample(&Line {
            orderkey: ok[i],
            partkey: pk[i],
            suppkey: sk[i],
            linenumber: ln[i],
            quantity: cents(q[i]),
            extendedprice: cents(p[i]),
            discount: cents(d[i]),
            tax: cents(t[i]),
            returnflag: rf.value(i),
            linestatus: ls.value(i),
            shipdate: sd.get(i),
            commitdate: cd.get(i),
            receiptdate: rd.get(i),
            shipinstruct: si.value(i),
            shipmode: sm.value(i),
            comment: c.value(i),
        });
    }
    check.merge(&part);
    Ok(())
}

/// `Connection::query_arrow`, one connection.
pub fn arrow_sync(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        for batch in conn.query_arrow(sql)? {
            add_batch(&mut check, &batch?)?;
        }
        Ok(check)
    })
}

async fn read_batches(
    mut conn: AsyncConnection,
    table: String,
) -> (Result<Check>, AsyncConnection) {
    let check = async {
        let mut check = Check::default();
        let mut batches = conn.query_arrow(&li::scan_sql(&table)?).await?;
        while let Some(batch) = batches.next().await {
            add_batch(&mut check, &batch?)?;
        }
        Ok(check)
    }
    .await;
    (check, conn)
}

/// `AsyncConnection::query_arrow`, one connection.
pub fn arrow_async(env: &mut Env<'_>) -> Result<f64> {
    async_reads(env, 1, read_batches)
}

/// `AsyncConnection::query_arrow` on `workers` connections at once.
pub fn arrow_parallel(env: &mut Env<'_>) -> Result<f64> {
    async_reads(env, env.workers, read_batches)
}

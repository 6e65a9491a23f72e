//! The read paths of `query.mix.*`: `execute_query` as routed, the same
//! forced onto each route, `execute_query_params` (`DataRow`s), `query_as`
//! tuples, `query_arrow` batches, and the async `execute_query`.
//!
//! Timed: from sending the query to the last value, every value decoded
//! (through `Row::try_get` by column type, into a tuple, or read from the
//! batch's columns) and folded into a [`Digest`]. Untimed: checking the
//! digest against hyperd's.

use std::time::Instant;

use hyperdb_api::arrow_array::cast::AsArray;
use hyperdb_api::arrow_array::types::{
    Date64Type, Decimal128Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
};
use hyperdb_api::arrow_array::{Array, ArrayRef, RecordBatch};
use hyperdb_api::arrow_schema::DataType;
use hyperdb_api::types::{Date, Numeric, Timestamp};
use hyperdb_api::{AsyncConnection, Connection, FromRow, ReadRoute};

use crate::data::Result;
use crate::mix::{Digest, MixPath, MixQuery};

/// One timed read of `sql` through `path`; checked against `want`.
pub fn run(
    path: MixPath,
    conn: &mut Connection,
    asyncs: &mut AsyncRun<'_>,
    q: MixQuery,
    sql: &str,
    want: &Digest,
) -> Result<f64> {
    let mut touch = 0u64;
    let mut got = Digest::default();
    let start = Instant::now();
    match path {
        MixPath::Routed | MixPath::ArrowRoute | MixPath::DataRowRoute => {
            let mut rows = match path {
                MixPath::Routed => conn.execute_query(sql)?,
                MixPath::ArrowRoute => conn.execute_query_by(sql, ReadRoute::Arrow)?,
                _ => conn.execute_query_params(sql, &[])?,
            };
            while let Some(row) = rows.next_row() {
                got.add_row(row?, &mut touch)?;
            }
        }
        MixPath::Typed => got = typed(conn, q, sql)?,
        MixPath::Batches => {
            for batch in conn.query_arrow(sql)? {
                add_batch(&mut got, &batch?, &mut touch)?;
            }
        }
        MixPath::Async => got = asyncs.read(sql, &mut touch)?,
    }
    let secs = start.elapsed().as_secs_f64();
    std::hint::black_box(touch);
    got.verify(&format!("query.mix.{} through {path:?}", q.name()), want)?;
    Ok(secs)
}

/// The async connection the mix reads through, opened on first use.
pub struct AsyncRun<'e> {
    pub rt: &'e tokio::runtime::Runtime,
    pub open: Box<dyn Fn() -> Result<AsyncConnection> + 'e>,
    pub conn: Option<AsyncConnection>,
}

impl AsyncRun<'_> {
    fn read(&mut self, sql: &str, touch: &mut u64) -> Result<Digest> {
        if self.conn.is_none() {
            self.conn = Some((self.open)()?);
        }
        let conn = self.conn.as_mut().ok_or("no async connection")?;
        self.rt.block_on(async {
            let mut got = Digest::default();
            let mut rows = conn.execute_query(sql).await?;
            while let Some(row) = rows.next_row().await {
                got.add_row(row?, touch)?;
            }
            Ok(got)
        })
    }

    /// Closes the connection, if one was opened.
    pub fn close(&mut self) -> Result<()> {
        if let Some(conn) = self.conn.take() {
            self.rt.block_on(conn.close())?;
        }
        Ok(())
    }
}

/// A tuple's values that may be NULL count only when they are not.
trait Present {
    fn present(&self) -> u64;
}

impl<T> Present for Option<T> {
    fn present(&self) -> u64 {
        u64::from(self.is_some())
    }
}

macro_rules! never_null {
    ($($t:ty),*) => {$(
        impl Present for $t {
            fn present(&self) -> u64 {
                1
            }
        }
    )*};
}
never_null!(i32, i64, String);

/// A row read as a tuple whose first value is the INT key.
trait Fold {
    fn fold(&self, d: &mut Digest);
}

macro_rules! fold_tuples {
    ($(($($t:ident $i:tt),*)),*) => {$(
        impl<$($t: Present),*> Fold for (i32, $($t,)*) {
            fn fold(&self, d: &mut Digest) {
                d.rows += 1;
                d.key_sum += i64::from(self.0);
                d.non_null += 1 $(+ self.$i.present())*;
            }
        }
    )*};
}
fold_tuples!(
    (),
    (B 1, C 2),
    (B 1, C 2, D 3),
    (B 1, C 2, D 3, E 4, F 5, G 6),
    (B 1, C 2, D 3, E 4, F 5, G 6, H 7)
);

/// `query_as` into the tuple type of `q`'s columns.
fn typed(conn: &mut Connection, q: MixQuery, sql: &str) -> Result<Digest> {
    fn read<T: for<'r> FromRow<'r> + Fold>(conn: &mut Connection, sql: &str) -> Result<Digest> {
        let mut d = Digest::default();
        for t in conn.query_as::<T>(sql)? {
            let t = t?;
            t.fold(&mut d);
            std::hint::black_box(&t);
        }
        Ok(d)
    }
    type Fact = (i32, i32, i32, i32, i32, Option<f64>, Option<i64>);
    type Wide = (
        i32,
        Option<String>,
        Option<String>,
        Option<Date>,
        Option<Timestamp>,
        Option<Numeric>,
        Option<f64>,
        Option<bool>,
    );
    match q {
        MixQuery::Select1 => read::<(i32,)>(conn, sql),
        MixQuery::PointLookup => read::<Fact>(conn, sql),
        MixQuery::GroupBy10 | MixQuery::GroupBy10k => read::<(i32, i64, Option<f64>)>(conn, sql),
        MixQuery::Join1k => read::<(i32, String, i64, Option<f64>)>(conn, sql),
        MixQuery::Top100 => read::<(i32, i32, Option<f64>)>(conn, sql),
        MixQuery::Filter1Pct => read::<(i32, i32, Option<f64>, Option<i64>)>(conn, sql),
        MixQuery::WideScan => read::<Wide>(conn, sql),
    }
}

/// Folds one batch: rows, the INT key column's sum, non-NULL values, and
/// every value of every column read.
fn add_batch(d: &mut Digest, batch: &RecordBatch, touch: &mut u64) -> Result<()> {
    d.rows += batch.num_rows() as u64;
    for (i, col) in batch.columns().iter().enumerate() {
        d.non_null += (col.len() - col.null_count()) as u64;
        if i == 0 {
            let keys = col
                .as_primitive_opt::<Int32Type>()
                .ok_or("the first column is not INT")?;
            d.key_sum += keys.iter().flatten().map(i64::from).sum::<i64>();
        }
        *touch ^= touch_values(col);
    }
    Ok(())
}

/// Reads every value of `col` as a columnar consumer would.
fn touch_values(col: &ArrayRef) -> u64 {
    fn fold<T: Copy>(values: &[T], f: impl Fn(T) -> u64) -> u64 {
        values.iter().fold(0, |acc, &v| acc ^ f(v))
    }
    match col.data_type() {
        DataType::Int32 => fold(col.as_primitive::<Int32Type>().values(), |v| v as u64),
        DataType::Int64 => fold(col.as_primitive::<Int64Type>().values(), |v| v as u64),
        DataType::Float64 => fold(col.as_primitive::<Float64Type>().values(), f64::to_bits),
        DataType::Date64 => fold(col.as_primitive::<Date64Type>().values(), |v| v as u64),
        DataType::Timestamp(..) => fold(
            col.as_primitive::<TimestampMicrosecondType>().values(),
            |v| v as u64,
        ),
        DataType::Decimal128(..) => {
            fold(col.as_primitive::<Decimal128Type>().values(), |v| v as u64)
        }
        DataType::Boolean => col.as_boolean().true_count() as u64,
        DataType::Utf8 => col
            .as_string::<i32>()
            .iter()
            .map(|s| s.map_or(0, str::len) as u64)
            .sum(),
        _ => col.len() as u64,
    }
}

//! The values whose bytes differ between HyperBinary and Arrow, converted
//! both ways: reading Arrow batches as rows (`row_columns`) and sending rows
//! as Arrow batches (`row_batch`). Every other type hyperd maps is the same
//! little-endian value in both.

use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_buffer::IntervalMonthDayNano;

use crate::error::RowErrorKind;
use crate::types::Date;

/// Julian day number of 1970-01-01, Arrow's epoch.
const UNIX_EPOCH_JULIAN_DAY: i64 = Date::UNIX_EPOCH.julian_day() as i64;
const MICROS_PER_DAY: i64 = 86_400_000_000;
const MILLIS_PER_DAY: i64 = 86_400_000;

/// Hyper DATE (Julian day) from Arrow Date32 (days since 1970).
#[inline]
pub(crate) fn julian_from_date32(days: i32) -> i32 {
    (i64::from(days) + UNIX_EPOCH_JULIAN_DAY) as i32
}

/// Hyper DATE from Arrow Date64 (milliseconds since 1970, whole days).
#[inline]
pub(crate) fn julian_from_date64(millis: i64) -> i32 {
    (millis.div_euclid(MILLIS_PER_DAY) + UNIX_EPOCH_JULIAN_DAY) as i32
}

/// Arrow Date32 from a Hyper DATE.
#[inline]
pub(crate) fn date32_from_julian(julian: i32) -> i32 {
    (i64::from(julian) - UNIX_EPOCH_JULIAN_DAY) as i32
}

/// Hyper TIMESTAMP (microseconds since Julian day 0) from Arrow's
/// microseconds since 1970. Wrapping, so that even hyperd's `infinity`,
/// which exceeds `i64::MAX` as Hyper micros, comes back bit for bit.
#[inline]
pub(crate) fn hyper_from_unix_micros(micros: i64) -> i64 {
    micros.wrapping_add(UNIX_EPOCH_JULIAN_DAY * MICROS_PER_DAY)
}

/// Arrow microseconds since 1970 from a Hyper TIMESTAMP; the inverse of
/// [`hyper_from_unix_micros`].
#[inline]
pub(crate) fn unix_micros_from_hyper(micros: i64) -> i64 {
    micros.wrapping_sub(UNIX_EPOCH_JULIAN_DAY * MICROS_PER_DAY)
}

/// hyperd's least TIMESTAMP, 4713-01-01 00:00:00 BC (also its
/// `-infinity`, core's `Timestamp::HYPER_MIN`), in Hyper's microseconds
/// since Julian day 0: midnight of [`Date::HYPER_MIN`].
const HYPER_MIN_TIMESTAMP: i64 = Date::HYPER_MIN.julian_day() as i64 * MICROS_PER_DAY;

/// Arrow's microseconds since 1970 for a Hyper TIMESTAMP, when hyperd's
/// Arrow reader takes them (measured): from hyperd's least timestamp up to
/// `i64::MAX` microseconds after 1970, 294247-01-10 04:00:54.775807. The
/// rest of hyperd's range, up to 294276-12-31 23:59:59.999999 (its
/// `infinity`), only HyperBinary carries: Hyper's count from Julian day 0
/// passes `i64::MAX` there, so it is read unsigned.
#[inline]
pub(crate) fn arrow_timestamp(hyper: i64) -> Option<i64> {
    let hyper = hyper as u64;
    if hyper < HYPER_MIN_TIMESTAMP as u64 {
        return None;
    }
    i64::try_from(i128::from(hyper) - i128::from(UNIX_EPOCH_JULIAN_DAY * MICROS_PER_DAY)).ok()
}

/// Whether hyperd's Arrow reader takes a TIME of `micros`: it refuses
/// 24:00:00, which Hyper (and HyperBinary) allow (measured).
#[inline]
pub(crate) fn arrow_time(micros: i64) -> bool {
    (0..MICROS_PER_DAY).contains(&micros)
}

/// Hyper's 16 INTERVAL bytes (microseconds, days, months) from Arrow's
/// MonthDayNano (sub-microsecond nanoseconds are dropped, as hyperd does).
#[inline]
pub(crate) fn hyper_interval(v: IntervalMonthDayNano) -> [u8; 16] {
    let mut out = [0; 16];
    out[..8].copy_from_slice(&(v.nanoseconds / 1000).to_le_bytes());
    out[8..12].copy_from_slice(&v.days.to_le_bytes());
    out[12..].copy_from_slice(&v.months.to_le_bytes());
    out
}

/// Arrow's MonthDayNano from Hyper's 16 INTERVAL bytes; `None` when the
/// microseconds do not fit an `i64` of nanoseconds (about 292 years).
#[inline]
pub(crate) fn arrow_interval(raw: [u8; 16]) -> Option<IntervalMonthDayNano> {
    let [m0, m1, m2, m3, m4, m5, m6, m7, d0, d1, d2, d3, n0, n1, n2, n3] = raw;
    let micros = i64::from_le_bytes([m0, m1, m2, m3, m4, m5, m6, m7]);
    Some(IntervalMonthDayNano::new(
        i32::from_le_bytes([n0, n1, n2, n3]),
        i32::from_le_bytes([d0, d1, d2, d3]),
        micros.checked_mul(1000)?,
    ))
}

/// Where a column sent to hyperd holds a date or time its Arrow reader
/// refuses or would round, what kind of refusal and why: a date outside
/// hyperd's range ([`Date::HYPER_MIN`] to [`Date::HYPER_MAX`]), a Date64
/// that is not a whole day, a timestamp outside 4713-01-01 00:00:00 BC to
/// 294276-12-31 23:59:59.999999 (a second or millisecond unit reaches past
/// the greatest), a TIME outside 00:00:00 up to (not including) 24:00:00.
/// hyperd fails the whole COPY on those with "error while reading Arrow
/// file" (XX001), naming neither row nor column; nanoseconds of a TIME or
/// INTERVAL it cuts to microseconds without a word (all measured). NULL
/// slots are not values, whatever bytes lie under them.
pub(crate) fn refused_temporal(array: &dyn Array) -> Option<(usize, RowErrorKind, String)> {
    use arrow_array::types::{
        Date32Type, Date64Type, IntervalMonthDayNanoType, Time32MillisecondType, Time32SecondType,
        Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
        TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
    };
    use arrow_schema::{DataType, IntervalUnit, TimeUnit};

    let per_second = |unit: &TimeUnit| match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let range = RowErrorKind::DateTimeOutOfRange;
    let (first, kind, why) = match array.data_type() {
        DataType::Date32 => (
            first_where::<Date32Type>(array, |days| !hyper_date(days)),
            range,
            DATE_RANGE,
        ),
        DataType::Date64 => match first_where::<Date64Type>(array, |ms| ms % MILLIS_PER_DAY != 0) {
            Some(first) => (
                Some(first),
                range,
                "is no whole day: a Date64 DATE takes midnights only",
            ),
            None => (
                first_where::<Date64Type>(array, |ms| !hyper_date(ms / MILLIS_PER_DAY)),
                range,
                DATE_RANGE,
            ),
        },
        DataType::Timestamp(unit, _) => {
            // hyperd's least and greatest in the column's unit, once (the
            // least is a whole second; the greatest is rounded down to the
            // unit): outside `i64` in the finer units, which never pass them.
            let least = unit_bound(HYPER_MIN_UNIX_MICROS, per_second(unit)).unwrap_or(i64::MIN);
            let greatest = unit_bound(HYPER_MAX_UNIX_MICROS, per_second(unit)).unwrap_or(i64::MAX);
            let outside = move |n: i64| n < least || n > greatest;
            let first = match unit {
                TimeUnit::Second => first_where::<TimestampSecondType>(array, outside),
                TimeUnit::Millisecond => first_where::<TimestampMillisecondType>(array, outside),
                TimeUnit::Microsecond => first_where::<TimestampMicrosecondType>(array, outside),
                TimeUnit::Nanosecond => first_where::<TimestampNanosecondType>(array, outside),
            };
            (
                first,
                range,
                "is outside hyperd's timestamps, 4713-01-01 00:00:00 BC to 294276-12-31 23:59:59.999999",
            )
        }
        DataType::Time32(unit) | DataType::Time64(unit) => {
            let day = 86_400 * per_second(unit);
            let outside = move |n: i64| !(0..day).contains(&n);
            let first = match unit {
                TimeUnit::Second => first_where::<Time32SecondType>(array, outside),
                TimeUnit::Millisecond => first_where::<Time32MillisecondType>(array, outside),
                TimeUnit::Microsecond => first_where::<Time64MicrosecondType>(array, outside),
                TimeUnit::Nanosecond => first_where::<Time64NanosecondType>(array, outside),
            };
            match (first, unit) {
                // In the day, but not whole microseconds: hyperd would cut them.
                (None, TimeUnit::Nanosecond) => (
                    first_where::<Time64NanosecondType>(array, |ns| ns % 1000 != 0),
                    RowErrorKind::OutOfRange,
                    SUB_MICROSECOND,
                ),
                _ => (
                    first,
                    range,
                    "is no time of day: hyperd takes 00:00:00 up to, not including, 24:00:00",
                ),
            }
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let values = array.as_primitive_opt::<IntervalMonthDayNanoType>()?;
            let first = first_valid(values, |v| v.nanoseconds % 1000 != 0)
                .map(|row| (row, values.value(row).nanoseconds));
            (first, RowErrorKind::OutOfRange, SUB_MICROSECOND)
        }
        _ => return None,
    };
    first.map(|(row, value)| (row, kind, format!("{value} ({}) {why}", array.data_type())))
}

const SUB_MICROSECOND: &str =
    "has a fraction of a microsecond: hyperd stores microseconds and would cut it; round it first";

/// hyperd's least and greatest TIMESTAMP in Arrow's microseconds since
/// 1970 (the greatest lies past `i64::MAX`).
const HYPER_MIN_UNIX_MICROS: i128 =
    (HYPER_MIN_TIMESTAMP - UNIX_EPOCH_JULIAN_DAY * MICROS_PER_DAY) as i128;
const HYPER_MAX_UNIX_MICROS: i128 = (Date::HYPER_MAX.julian_day() as i128 + 1
    - UNIX_EPOCH_JULIAN_DAY as i128)
    * MICROS_PER_DAY as i128
    - 1;

/// `micros` in a unit of `per_second` a second, rounded down; `None` past
/// `i64`.
fn unit_bound(micros: i128, per_second: i64) -> Option<i64> {
    let per_second = i128::from(per_second);
    let in_unit = if per_second >= 1_000_000 {
        micros * (per_second / 1_000_000)
    } else {
        micros.div_euclid(1_000_000 / per_second)
    };
    i64::try_from(in_unit).ok()
}

const DATE_RANGE: &str = "is outside hyperd's DATE range, 4713-01-01 BC to 294276-12-31";

/// Whether the date `days` after 1970-01-01 is in hyperd's range.
fn hyper_date(days: i64) -> bool {
    i32::try_from(days + UNIX_EPOCH_JULIAN_DAY)
        .is_ok_and(|julian| Date::from_julian_day(julian).is_in_hyper_range())
}

/// The first non-NULL value of `array` (of type `T`) that `bad` picks.
fn first_where<T>(array: &dyn Array, bad: impl Fn(i64) -> bool) -> Option<(usize, i64)>
where
    T: arrow_array::ArrowPrimitiveType,
    T::Native: Into<i64>,
{
    let values = array.as_primitive_opt::<T>()?;
    let row = first_valid(values, |v| bad(v.into()))?;
    Some((row, values.value(row).into()))
}

/// The first value of `array` that `bad` picks and that is not NULL: one
/// pass over the values, validity read only where one is picked (a NULL
/// slot's bytes are not a value).
pub(super) fn first_valid<T: arrow_array::ArrowPrimitiveType>(
    array: &arrow_array::PrimitiveArray<T>,
    bad: impl Fn(T::Native) -> bool,
) -> Option<usize> {
    let values = array.values();
    let mut from = 0;
    while let Some(at) = values[from..].iter().position(|&v| bad(v)) {
        let row = from + at;
        if array.is_valid(row) {
            return Some(row);
        }
        from = row + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_invert_each_other() {
        for julian in [0, 2_440_588, 2_451_545, 5_373_484] {
            assert_eq!(julian_from_date32(date32_from_julian(julian)), julian);
        }
        assert_eq!(date32_from_julian(2_451_545), 10_957, "2000-01-01");
        assert_eq!(julian_from_date64(-1), 2_440_587, "1969-12-31");
        for micros in [0, -1, i64::MAX, i64::MIN, 946_684_800_000_000] {
            assert_eq!(
                hyper_from_unix_micros(unix_micros_from_hyper(micros)),
                micros
            );
        }
        // hyperd's least timestamp, the last Arrow carries, hyperd's greatest.
        let last_arrow = i64::MAX.wrapping_add(UNIX_EPOCH_JULIAN_DAY * MICROS_PER_DAY);
        assert_eq!(
            arrow_timestamp(HYPER_MIN_TIMESTAMP),
            Some(-210_863_520_000_000_000)
        );
        assert_eq!(arrow_timestamp(HYPER_MIN_TIMESTAMP - 1), None);
        assert_eq!(arrow_timestamp(last_arrow), Some(i64::MAX));
        assert_eq!(arrow_timestamp(last_arrow.wrapping_add(1)), None);
        assert_eq!(arrow_timestamp(-9_011_559_254_509_551_617), None);
        assert_eq!(arrow_timestamp(-1), None);
        assert!(arrow_time(MICROS_PER_DAY - 1) && !arrow_time(MICROS_PER_DAY));
        // hyperd's timestamps in each Arrow unit (the greatest measured:
        // 9224318015999 s went in, 9224318016000 s failed the COPY).
        assert_eq!(
            unit_bound(HYPER_MAX_UNIX_MICROS, 1),
            Some(9_224_318_015_999)
        );
        assert_eq!(
            unit_bound(HYPER_MAX_UNIX_MICROS, 1_000),
            Some(9_224_318_015_999_999)
        );
        assert_eq!(unit_bound(HYPER_MAX_UNIX_MICROS, 1_000_000), None);
        assert_eq!(unit_bound(HYPER_MIN_UNIX_MICROS, 1), Some(-210_863_520_000));
        assert_eq!(
            unit_bound(HYPER_MIN_UNIX_MICROS, 1_000_000),
            arrow_timestamp(HYPER_MIN_TIMESTAMP)
        );
        assert_eq!(unit_bound(HYPER_MIN_UNIX_MICROS, 1_000_000_000), None);
        let v = IntervalMonthDayNano::new(-3, 40, -5_000);
        assert_eq!(arrow_interval(hyper_interval(v)), Some(v));
        let mut too_long = hyper_interval(v);
        too_long[..8].copy_from_slice(&(i64::MAX / 999).to_le_bytes());
        assert_eq!(arrow_interval(too_long), None);
    }
}

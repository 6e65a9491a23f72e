/**
 * Exact values for the types a JS primitive cannot hold without loss.
 *
 * - TIMESTAMP / TIMESTAMPTZ keep microseconds (a `Date` has milliseconds):
 *   `HyperTimestamp`, with `toDate()` when milliseconds are enough.
 * - TIME keeps microseconds: `HyperTime`.
 * - INTERVAL is months, days and microseconds, which no single number is:
 *   `HyperInterval`.
 * - NUMERIC has up to 38 digits: read as a decimal string; sent with
 *   `numeric('12.30')`.
 * - DATE reads as a `Date` at midnight UTC (always exact); send one with
 *   `dateOnly('2024-02-29')`, since a JS `Date` parameter is a TIMESTAMPTZ.
 */

import { ErrorCode, HyperError, invalidArgument } from './errors'
import { booleanOf, requireInteger, shown } from './options'

const MICROS_PER_MILLI = 1000n
const MICROS_PER_DAY = 86_400_000_000n

/** `micros` when it is a `bigint` (a `number` of microseconds may already be rounded). */
function exactMicros(micros: bigint, what: string): bigint {
  if (typeof micros !== 'bigint') {
    throw invalidArgument(`${what} takes microseconds as a bigint (1500000n is 1.5 s), not ${shown(micros)}`)
  }
  return micros
}

function pad(n: number | bigint, width: number): string {
  return n.toString().padStart(width, '0')
}

/**
 * A TIMESTAMP (`tz: false`) or TIMESTAMPTZ (`tz: true`), to the microsecond.
 * Inserters store it as it is; as a parameter for a column of the other
 * kind, hyperd's cast goes through the session time zone (as PostgreSQL's).
 */
export class HyperTimestamp {
  /** Microseconds since 1970-01-01 00:00:00 (UTC for TIMESTAMPTZ). */
  readonly micros: bigint
  readonly tz: boolean

  constructor(micros: bigint, tz = false) {
    this.micros = exactMicros(micros, 'HyperTimestamp')
    this.tz = booleanOf(tz, "HyperTimestamp's tz")
  }

  /**
   * From a `Date` (whole milliseconds). A `Date` is an instant, so this is
   * a TIMESTAMPTZ unless `tz` is false (then the `Date`'s UTC wall clock),
   * where the constructor's plain microseconds default to a TIMESTAMP.
   */
  static fromDate(date: Date, tz = true): HyperTimestamp {
    const ms = date instanceof Date ? date.getTime() : NaN
    if (Number.isNaN(ms)) {
      throw invalidArgument(`HyperTimestamp.fromDate takes a valid Date, not ${String(date)}`)
    }
    return new HyperTimestamp(BigInt(ms) * MICROS_PER_MILLI, tz)
  }

  /**
   * As a `Date`, dropping the sub-millisecond digits. A `HyperError`
   * (22008) past what a `Date` holds (after +275760-09-13, which hyperd's
   * timestamps reach up to 294276-12-31).
   */
  toDate(): Date {
    const date = new Date(Number(floorDiv(this.micros, MICROS_PER_MILLI)))
    if (Number.isNaN(date.getTime())) {
      throw new HyperError({
        code: ErrorCode.DATETIME_FIELD_OVERFLOW,
        message: `${this.toISOString()} is past what a JS Date holds`,
      })
    }
    return date
  }

  /**
   * ISO 8601 with six fractional digits (`Z` for TIMESTAMPTZ), for every
   * timestamp hyperd holds: years before 0001 and after 9999 in the
   * extended form (`-004712`, `+294276`); year 0000 is 1 BC.
   */
  toISOString(): string {
    const day = floorDiv(this.micros, MICROS_PER_DAY)
    const time = HyperTime.format(this.micros - day * MICROS_PER_DAY)
    const [y, m, d] = civilFromDays(Number(day))
    const year = y < 0 ? `-${pad(-y, 6)}` : y > 9999 ? `+${pad(y, 6)}` : pad(y, 4)
    return `${year}-${pad(m, 2)}-${pad(d, 2)}T${time}${this.tz ? 'Z' : ''}`
  }

  toString(): string {
    return this.toISOString()
  }

  toJSON(): string {
    return this.toISOString()
  }

  equals(other: HyperTimestamp): boolean {
    return this.micros === other.micros && this.tz === other.tz
  }
}

/**
 * A TIME of day, to the microsecond. `24:00:00` is valid (hyperd returns
 * it), but is neither sent as a parameter nor inserted: Tableau's Hyper
 * API cannot read a table that holds it.
 */
export class HyperTime {
  /** Microseconds since midnight. */
  readonly micros: bigint

  /** Throws a `HyperError` (22008) outside 00:00:00 to 24:00:00, hyperd's TIME range. */
  constructor(micros: bigint) {
    this.micros = exactMicros(micros, 'HyperTime')
    if (micros < 0n || micros > MICROS_PER_DAY) {
      throw new HyperError({
        code: ErrorCode.DATETIME_FIELD_OVERFLOW,
        message: `HyperTime takes 0n (00:00:00) to 86400000000n (24:00:00) microseconds, not ${micros}n`,
      })
    }
  }

  static format(micros: bigint): string {
    const s = micros / 1_000_000n
    const frac = micros % 1_000_000n
    return `${pad(s / 3600n, 2)}:${pad((s / 60n) % 60n, 2)}:${pad(s % 60n, 2)}.${pad(frac, 6)}`
  }

  toString(): string {
    return HyperTime.format(this.micros)
  }

  toJSON(): string {
    return this.toString()
  }
}

/** An INTERVAL: months, days and microseconds, kept apart as SQL keeps them. */
export class HyperInterval {
  readonly months: number
  readonly days: number
  readonly micros: bigint

  /** Throws a `HyperError` (22023) unless months and days are 32-bit integers and micros a bigint. */
  constructor(months: number, days: number, micros: bigint) {
    // hyperd keeps each as a 32-bit integer.
    this.months = requireInteger(months, 'HyperInterval months', -(2 ** 31), 2 ** 31 - 1)
    this.days = requireInteger(days, 'HyperInterval days', -(2 ** 31), 2 ** 31 - 1)
    this.micros = exactMicros(micros, 'HyperInterval')
  }

  toString(): string {
    return `${this.months} mons ${this.days} days ${this.micros < 0n ? '-' : ''}${HyperTime.format(this.micros < 0n ? -this.micros : this.micros)}`
  }

  toJSON(): { months: number; days: number; micros: string } {
    return { months: this.months, days: this.days, micros: this.micros.toString() }
  }
}

/** What `decimalFit` finds of decimal text. */
export const enum DecimalFit {
  Fits = 0,
  /** No decimal number: a sign, digits with at most one point (one digit at least), an exponent. */
  NotANumber = 1,
  /** More significant digits after the point than allowed. */
  TooManyDecimals = 2,
  /** More significant digits before the point than allowed. */
  TooManyIntegerDigits = 3,
}

/**
 * `text` without the ASCII white space (tab, newline, form feed, return,
 * space) around it: what the native NUMERIC parser and hyperd's cast take.
 * `String.trim` also strips a no-break space and a byte order mark, which
 * both refuse.
 */
function asciiTrim(text: string): string {
  const blank = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13
  let start = 0
  let end = text.length
  while (start < end && blank(text.charCodeAt(start))) start++
  while (end > start && blank(text.charCodeAt(end - 1))) end--
  return start === 0 && end === text.length ? text : text.slice(start, end)
}

/**
 * Whether decimal text (`'0012.500e1'`: 3 significant digits before the
 * point, 0 after) has at most `maxInteger` and `maxFraction` significant
 * digits either side of the point: what the native NUMERIC parser reads,
 * so that a value is checked against its column's precision and scale
 * when it is added, not when its batch is sent. One pass over the
 * characters, nothing allocated: inserts call it for every value.
 */
export function decimalFit(text: string, maxInteger: number, maxFraction: number): DecimalFit {
  const t = asciiTrim(text)
  let i = t.charCodeAt(0) === 43 || t.charCodeAt(0) === 45 ? 1 : 0
  let digits = 0
  let integer = 0
  let first = -1
  let last = -1
  let point = false
  for (; i < t.length; i++) {
    const c = t.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      if (c !== 48) {
        if (first < 0) first = digits
        last = digits
      }
      digits++
      if (!point) integer++
    } else if (c === 46 && !point) {
      point = true
    } else {
      break
    }
  }
  if (digits === 0) return DecimalFit.NotANumber
  let exponent = 0
  if (i < t.length) {
    const e = t.charCodeAt(i)
    if (e !== 101 && e !== 69) return DecimalFit.NotANumber
    i++
    const negative = t.charCodeAt(i) === 45
    if (negative || t.charCodeAt(i) === 43) i++
    if (i === t.length) return DecimalFit.NotANumber
    for (; i < t.length; i++) {
      const c = t.charCodeAt(i)
      if (c < 48 || c > 57) return DecimalFit.NotANumber
      // Far past any NUMERIC's 38 digits, and never Infinity.
      exponent = Math.min(exponent * 10 + (c - 48), 1e9)
    }
    if (negative) exponent = -exponent
  }
  if (first < 0) return DecimalFit.Fits // zero
  const at = integer + exponent
  if (last + 1 - at > maxFraction) return DecimalFit.TooManyDecimals
  if (at - first > maxInteger) return DecimalFit.TooManyIntegerDigits
  return DecimalFit.Fits
}

/** A NUMERIC parameter, exact: `numeric('12345678901234567890.12')`. */
export class HyperNumeric {
  readonly value: string

  constructor(value: string) {
    if (typeof value !== 'string') {
      // A number would have been rounded already: 0.1 + 0.2 is not 0.3.
      throw invalidArgument(`numeric() takes the exact decimal text, not a ${typeof value}`)
    }
    if (decimalFit(value, Infinity, Infinity) === DecimalFit.NotANumber) {
      throw invalidArgument(`numeric() takes decimal text such as '-12.50' or '1.5e3', not ${JSON.stringify(value)}`)
    }
    this.value = value
  }

  toString(): string {
    return this.value
  }
}

/**
 * A DATE to send: `dateOnly('2024-02-29')`. Years before 1 as ISO 8601
 * writes them (`-4712-01-01`, year 0 being 1 BC) or as hyperd prints
 * them (`4713-01-01 BC`); years past 9999 with more digits. Parsed here,
 * once, for parameters and inserts alike; text that is no date throws a
 * `HyperError` (22023) at once.
 */
export class HyperDate {
  readonly value: string
  /** Days since 1970-01-01. */
  readonly days: number

  constructor(value: string) {
    this.value = value
    this.days = daysOfDate(value)
  }

  toString(): string {
    return this.value
  }
}

export function numeric(value: string): HyperNumeric {
  return new HyperNumeric(value)
}

export function dateOnly(value: string): HyperDate {
  return new HyperDate(value)
}

/**
 * hyperd's least timestamp, 4713-01-01 00:00:00 BC, in microseconds since
 * 1970. Batches read as rows carry the timestamps past Arrow's `i64` (after
 * 294247-01-10 04:00:54.775807, up to hyperd's 294276-12-31 23:59:59.999999)
 * wrapped around, so below this (`Place::query_row_batches` in Rust).
 * Rust's `Timestamp::HYPER_MIN`; the inserters refuse an earlier one.
 */
export const LEAST_TIMESTAMP = -210_863_520_000_000_000n
const TWO_64 = 1n << 64n

/** A timestamp's microseconds since 1970 from a batch read as rows. */
export function timestampMicros(v: bigint): bigint {
  return v < LEAST_TIMESTAMP ? v + TWO_64 : v
}

/**
 * Year, month and day of the proleptic Gregorian calendar `days` after
 * 1970-01-01 (H. Hinnant's `civil_from_days`): a `Date` ends at year
 * 275760, hyperd's timestamps go on to 294276.
 */
const DATE_TEXT = /^\s*([+-])?(\d{1,6})-(\d{1,2})-(\d{1,2})(?:\s+(BC|AD))?\s*$/i

/** hyperd's least and greatest DATE (Rust's `Date::HYPER_MIN`, `HYPER_MAX`), days since 1970. */
export const LEAST_DATE_DAYS = -2_440_550
export const GREATEST_DATE_DAYS = 106_762_939

/** Days since 1970 of a date's text (see `HyperDate`). */
function daysOfDate(text: string): number {
  const m = typeof text === 'string' ? DATE_TEXT.exec(text) : null
  if (m !== null) {
    const [, sign, digits, month, day, era] = m
    const bc = era?.toUpperCase() === 'BC'
    let y = sign === '-' ? -Number(digits) : Number(digits)
    if (bc) {
      y = sign === undefined && y >= 1 ? 1 - y : NaN
    }
    const [mo, d] = [Number(month), Number(day)]
    if (Number.isInteger(y) && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo)) {
      const days = daysFromCivil(y, mo, d)
      if (days < LEAST_DATE_DAYS || days > GREATEST_DATE_DAYS) {
        throw new HyperError({
          code: ErrorCode.INVALID_PARAMETER_VALUE,
          message: `invalid DATE ${JSON.stringify(text)}: outside hyperd's range, 4713-01-01 BC to 294276-12-31`,
        })
      }
      return days
    }
    if (Number.isInteger(y)) {
      throw new HyperError({
        code: ErrorCode.INVALID_PARAMETER_VALUE,
        message: `invalid DATE ${JSON.stringify(text)}: no such day in the calendar`,
      })
    }
  }
  throw new HyperError({
    code: ErrorCode.INVALID_PARAMETER_VALUE,
    message: `invalid DATE ${JSON.stringify(text)}: expected YYYY-MM-DD, -YYYY-MM-DD or YYYY-MM-DD BC`,
  })
}

/** Days in `month` of the astronomical `year` (0 is 1 BC). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** Days since 1970 of a proleptic Gregorian date (the inverse of `civilFromDays`). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d]
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

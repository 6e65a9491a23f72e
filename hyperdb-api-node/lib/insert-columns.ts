/**
 * Column builders: where an inserter gathers one batch of a column's
 * values, checked against the column's type as they come in, in the
 * memory the native layer takes in one call a batch (typed arrays, one
 * string a text column). A value that does not fit is refused with the
 * row, column and value; nothing is truncated or converted silently.
 *
 * Each SQL type has its own builder class, so each `set` call site in a
 * generated row function (see `inserter.ts`) sees one class and V8 can
 * inline it.
 */
import type { ColumnDef, NativeColumn } from './native'
import { ErrorCode, HyperError } from './errors'
import {
  HyperDate,
  HyperInterval,
  HyperNumeric,
  HyperTime,
  HyperTimestamp,
  DecimalFit,
  decimalFit,
  GREATEST_DATE_DAYS,
  LEAST_DATE_DAYS,
  LEAST_TIMESTAMP,
} from './values'

const TWO_32 = 4294967296
const MS_PER_DAY = 86_400_000
const I64_MIN = -(2n ** 63n)
const I64_MAX = 2n ** 63n - 1n

/**
 * Where the batch being gathered starts within the whole insert, and the
 * characters and bytes its text and binary values hold so far.
 */
export interface BatchStart {
  row: number
  units: number
}

/**
 * A batch also ends once its text and binary values reach this many
 * characters and bytes: a text column of a batch crosses as one string,
 * which V8 caps at 2^29 - 24 characters (64K rows of 10 KB text failed
 * with "Invalid string length"), and a batch's memory stays that of the
 * Rust inserters' (16 MiB).
 */
export const BATCH_UNITS = 16 * 1024 * 1024

/** One column's values for the batch being gathered. */
export abstract class ColumnBuilder {
  protected valid: Uint8Array
  protected hasNull = false

  constructor(
    readonly name: string,
    readonly sqlType: string,
    readonly nullable: boolean,
    protected readonly start: BatchStart,
    capacity: number,
  ) {
    this.valid = new Uint8Array(capacity).fill(1)
  }

  /** Stores `v` as row `row` of the batch, or throws. */
  abstract set(v: unknown, row: number): void

  /** Whether values vary in length (text, bytes): they count toward `BATCH_UNITS`. */
  get varies(): boolean {
    return false
  }

  /** Makes room for `capacity` rows, keeping the batch's rows so far. */
  grow(capacity: number): void {
    const rows = this.valid.length
    this.valid = grown(this.valid, capacity)
    this.valid.fill(1, rows)
    this.growValues(capacity)
  }

  /** `grow` for the values. */
  protected abstract growValues(capacity: number): void

  /** The batch's first `rows` values for the native layer. */
  abstract column(rows: number): NativeColumn

  /** Undoes a row that was refused halfway (its slot is written again). */
  clear(row: number): void {
    this.valid[row] = 1
  }

  /** Starts a new batch. */
  reset(): void {
    if (this.hasNull) {
      this.valid.fill(1)
      this.hasNull = false
    }
  }

  protected validity(rows: number): Uint8Array | undefined {
    return this.hasNull ? this.valid.subarray(0, rows) : undefined
  }

  /** NULL (`null`), or a refusal of `undefined` and every other value. */
  protected setNull(v: unknown, row: number, expected: string): void {
    if (v === null && this.nullable) {
      this.valid[row] = 0
      this.hasNull = true
      return
    }
    if (v === null) {
      throw this.refuse(ErrorCode.NOT_NULL_VIOLATION, row, v, 'NULL in a NOT NULL column')
    }
    if (v === undefined) {
      throw this.refuse(ErrorCode.DATATYPE_MISMATCH, row, v, 'no value (use null for NULL)')
    }
    throw this.refuse(ErrorCode.DATATYPE_MISMATCH, row, v, `expected ${expected}`)
  }

  refuse(code: string, row: number, v: unknown, why: string): HyperError {
    const at = this.start.row + row
    return new HyperError({
      code,
      message: `row ${at}, column \`${this.name}\` (${this.sqlType}): ${describe(v)}: ${why}`,
      row: at,
      column: this.name,
    })
  }
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)
  if (typeof v === 'bigint') return `${v}n`
  if (v instanceof Date) return `Date ${Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString()}`
  if (v === null || v === undefined || typeof v !== 'object') return String(v)
  const own = (v as object).toString
  // The exact-value classes (HyperTime, HyperDate, ...) say what they hold.
  return own === Object.prototype.toString ? Object.prototype.toString.call(v) : `${v.constructor.name} ${String(v)}`
}

/**
 * `n` (finite) as plain decimal text: `String` writes exponents below
 * 1e-6 and from 1e21, which NUMERIC text does not take. The digits are
 * the shortest ones that read back as `n`, as `String` gives them.
 */
export function plainDecimal(n: number): string {
  const text = String(n)
  const e = text.indexOf('e')
  if (e < 0) return text
  const sign = text.startsWith('-') ? '-' : ''
  const mantissa = text.slice(sign.length, e)
  const exponent = Number(text.slice(e + 1))
  const point = mantissa.indexOf('.')
  const digits = mantissa.replace('.', '')
  const at = (point < 0 ? mantissa.length : point) + exponent
  if (at <= 0) return `${sign}0.${'0'.repeat(-at)}${digits}`
  if (at >= digits.length) return `${sign}${digits}${'0'.repeat(at - digits.length)}`
  return `${sign}${digits.slice(0, at)}.${digits.slice(at)}`
}

function bytesOf(a: ArrayBufferView, rows: number, width: number): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, rows * width)
}

type Values = Uint8Array | Int16Array | Int32Array | Uint32Array | Float32Array | Float64Array | BigInt64Array

/** `a` copied into a new array of its type with room for `length` values. */
function grown<T extends Values>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length)
  b.set(a as never)
  return b
}

type IntArray = Int16Array | Int32Array | Uint32Array

/** SMALLINT, INTEGER, OID: a `number` that is an integer in range, or such a `bigint`. */
class IntBuilder extends ColumnBuilder {
  private values: IntArray

  constructor(
    c: ColumnDef,
    start: BatchStart,
    capacity: number,
    make: new (n: number) => IntArray,
    private readonly min: number,
    private readonly max: number,
  ) {
    super(c.name, c.sqlType, c.nullable !== false, start, capacity)
    this.values = new make(capacity)
  }

  set(v: unknown, row: number): void {
    if (typeof v === 'number' && Number.isInteger(v) && v >= this.min && v <= this.max) {
      this.values[row] = v
    } else {
      this.slow(v, row)
    }
  }

  private slow(v: unknown, row: number): void {
    if (typeof v === 'bigint' && v >= BigInt(this.min) && v <= BigInt(this.max)) {
      this.values[row] = Number(v)
    } else if (typeof v === 'number' || typeof v === 'bigint') {
      const integral = typeof v === 'bigint' || Number.isInteger(v)
      throw this.refuse(
        integral ? ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE : ErrorCode.DATATYPE_MISMATCH,
        row,
        v,
        integral ? `out of range ${this.min}..${this.max}` : 'not an integer',
      )
    } else {
      this.setNull(v, row, 'an integer number or bigint')
    }
  }

  protected growValues(capacity: number): void {
    this.values = grown(this.values, capacity)
  }

  column(rows: number): NativeColumn {
    return { fixed: bytesOf(this.values, rows, this.values.BYTES_PER_ELEMENT), validity: this.validity(rows) }
  }
}

/**
 * Eight bytes a value, written as two 32-bit halves so that a `number`
 * needs no `BigInt` (x64 is little-endian).
 */
abstract class Int64Builder extends ColumnBuilder {
  private big: BigInt64Array
  private lo: Uint32Array
  private hi: Int32Array

  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c.name, c.sqlType, c.nullable !== false, start, capacity)
    this.big = new BigInt64Array(capacity)
    this.lo = new Uint32Array(this.big.buffer)
    this.hi = new Int32Array(this.big.buffer)
  }

  /** `n` must be a safe integer. */
  protected setNumber(n: number, row: number): void {
    const hi = Math.floor(n / TWO_32)
    this.lo[2 * row] = n - hi * TWO_32
    this.hi[2 * row + 1] = hi
  }

  protected setBigInt(b: bigint, row: number, v: unknown): void {
    if (b < I64_MIN || b > I64_MAX) {
      throw this.refuse(ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE, row, v, 'out of the 64-bit range')
    }
    this.big[row] = b
  }

  protected growValues(capacity: number): void {
    this.big = grown(this.big, capacity)
    this.lo = new Uint32Array(this.big.buffer)
    this.hi = new Int32Array(this.big.buffer)
  }

  column(rows: number): NativeColumn {
    return { fixed: bytesOf(this.big, rows, 8), validity: this.validity(rows) }
  }
}

/**
 * BIGINT: a `bigint`, or a `number` that is a safe integer: from 2^53 on, a
 * number may be the rounding of another (2^53 + 1 is 2^53).
 */
class BigIntBuilder extends Int64Builder {
  set(v: unknown, row: number): void {
    if (typeof v === 'number' && Number.isSafeInteger(v)) {
      this.setNumber(v, row)
    } else if (typeof v === 'bigint') {
      this.setBigInt(v, row, v)
    } else if (typeof v === 'number') {
      const integral = Number.isInteger(v)
      throw this.refuse(
        integral ? ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE : ErrorCode.DATATYPE_MISMATCH,
        row,
        v,
        integral ? 'a number of 2^53 or more may be rounded (not a safe integer): pass a bigint' : 'not an integer',
      )
    } else {
      this.setNull(v, row, 'a bigint or an integer number')
    }
  }
}

/** TIMESTAMP, TIMESTAMPTZ: a `HyperTimestamp` (microseconds) or a `Date` (milliseconds). */
class TimestampBuilder extends Int64Builder {
  set(v: unknown, row: number): void {
    if (v instanceof Date) {
      const ms = v.getTime()
      if (Number.isSafeInteger(ms * 1000)) {
        this.setNumber(ms * 1000, row)
      } else if (Number.isNaN(ms)) {
        throw this.refuse(ErrorCode.DATATYPE_MISMATCH, row, v, 'an invalid Date')
      } else {
        this.setMicros(BigInt(ms) * 1000n, row, v)
      }
    } else if (v instanceof HyperTimestamp) {
      this.setMicros(v.micros, row, v)
    } else {
      this.setNull(v, row, 'a HyperTimestamp or a Date')
    }
  }

  /**
   * `micros` since 1970, from hyperd's least timestamp up to the last
   * Arrow's `i64` holds (later ones `setBigInt` refuses). One before 4713
   * BC was taken here and failed the whole insert at `execute()`, when the
   * native layer checked its batch; a `Date` whose microseconds are a safe
   * integer (years 1685 to 2255) is never before it.
   */
  private setMicros(micros: bigint, row: number, v: unknown): void {
    if (micros < LEAST_TIMESTAMP) {
      throw this.refuse(
        ErrorCode.DATETIME_FIELD_OVERFLOW,
        row,
        v,
        "before hyperd's least timestamp, 4713-01-01 00:00:00 BC",
      )
    }
    this.setBigInt(micros, row, v)
  }
}

/** TIME: a `HyperTime` (microseconds since midnight, up to 24:00:00). */
class TimeBuilder extends Int64Builder {
  set(v: unknown, row: number): void {
    if (v instanceof HyperTime) {
      if (v.micros < 0n || v.micros >= 86_400_000_000n) {
        // hyperd's Arrow reader takes 00:00:00 up to, not including, 24:00:00.
        throw this.refuse(ErrorCode.DATETIME_FIELD_OVERFLOW, row, v, 'inserts take a time of day below 24:00:00')
      }
      this.setBigInt(v.micros, row, v)
    } else {
      this.setNull(v, row, 'a HyperTime')
    }
  }
}

/** DATE: a `Date` at midnight UTC (as DATE reads), or `dateOnly('2024-02-29')`. */
export class DateBuilder extends Int64Builder {
  set(v: unknown, row: number): void {
    if (v instanceof Date) {
      this.setMillis(v.getTime(), row, v)
    } else if (v instanceof HyperDate) {
      const ms = v.days * MS_PER_DAY
      if (Number.isSafeInteger(ms)) {
        this.setNumber(ms, row)
      } else {
        this.setBigInt(BigInt(v.days) * BigInt(MS_PER_DAY), row, v)
      }
    } else {
      this.setNull(v, row, 'a Date at midnight UTC or dateOnly(...)')
    }
  }

  /**
   * Milliseconds since 1970 at midnight UTC: a `Date`'s, or one of the
   * Float64Array `queryColumns` reads a DATE column as (`insertColumns`
   * takes it back). `v` is the value as given, for a refusal.
   */
  setMillis(ms: number, row: number, v: unknown = ms): void {
    if (!Number.isInteger(ms) || ms % MS_PER_DAY !== 0) {
      throw this.refuse(ErrorCode.DATATYPE_MISMATCH, row, v, 'a DATE takes a Date at midnight UTC')
    }
    // A `Date` reaches back past hyperd's first DATE (one before it failed
    // the whole insert at `execute()`); a Float64Array past its last too.
    if (ms < LEAST_DATE_DAYS * MS_PER_DAY || ms > GREATEST_DATE_DAYS * MS_PER_DAY) {
      throw this.refuse(
        ErrorCode.DATETIME_FIELD_OVERFLOW,
        row,
        v,
        "outside hyperd's DATE range, 4713-01-01 BC to 294276-12-31",
      )
    }
    if (Number.isSafeInteger(ms)) {
      this.setNumber(ms, row)
    } else {
      this.setBigInt(BigInt(ms), row, v)
    }
  }
}

/** DOUBLE PRECISION, REAL: a `number`. */
class FloatBuilder extends ColumnBuilder {
  private values: Float64Array | Float32Array

  constructor(c: ColumnDef, start: BatchStart, capacity: number, make: new (n: number) => Float64Array | Float32Array) {
    super(c.name, c.sqlType, c.nullable !== false, start, capacity)
    this.values = new make(capacity)
  }

  set(v: unknown, row: number): void {
    if (typeof v === 'number') {
      this.values[row] = v
    } else {
      this.setNull(v, row, 'a number')
    }
  }

  protected growValues(capacity: number): void {
    this.values = grown(this.values, capacity)
  }

  column(rows: number): NativeColumn {
    return { fixed: bytesOf(this.values, rows, this.values.BYTES_PER_ELEMENT), validity: this.validity(rows) }
  }
}

/** REAL: a `number` within float32's range (its precision is REAL's). */
class RealBuilder extends FloatBuilder {
  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c, start, capacity, Float32Array)
  }

  override set(v: unknown, row: number): void {
    if (typeof v === 'number' && Number.isFinite(v) && !Number.isFinite(Math.fround(v))) {
      throw this.refuse(ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE, row, v, 'out of the REAL range')
    }
    super.set(v, row)
  }
}

/** BOOLEAN: `true` or `false`. */
class BoolBuilder extends ColumnBuilder {
  private values: Uint8Array

  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c.name, c.sqlType, c.nullable !== false, start, capacity)
    this.values = new Uint8Array(capacity)
  }

  set(v: unknown, row: number): void {
    if (typeof v === 'boolean') {
      this.values[row] = v ? 1 : 0
    } else {
      this.setNull(v, row, 'a boolean')
    }
  }

  protected growValues(capacity: number): void {
    this.values = grown(this.values, capacity)
  }

  column(rows: number): NativeColumn {
    return { fixed: this.values.subarray(0, rows), validity: this.validity(rows) }
  }
}

/** INTERVAL: a `HyperInterval`. */
class IntervalBuilder extends ColumnBuilder {
  private ints: Int32Array
  private big: BigInt64Array

  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c.name, c.sqlType, c.nullable !== false, start, capacity)
    this.big = new BigInt64Array(capacity * 2)
    this.ints = new Int32Array(this.big.buffer)
  }

  set(v: unknown, row: number): void {
    if (!(v instanceof HyperInterval)) {
      this.setNull(v, row, 'a HyperInterval')
      return
    }
    if ((v.months | 0) !== v.months || (v.days | 0) !== v.days) {
      throw this.refuse(ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE, row, v, 'months and days must be 32-bit integers')
    }
    if (v.micros < I64_MIN / 1000n || v.micros > I64_MAX / 1000n) {
      // Inserts travel as Arrow, whose intervals count nanoseconds in 64 bits.
      throw this.refuse(
        ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE,
        row,
        v,
        'an inserted INTERVAL holds at most 2^63 nanoseconds of time (106,751 days): send a longer one as a parameter',
      )
    }
    this.ints[4 * row] = v.months
    this.ints[4 * row + 1] = v.days
    this.big[2 * row + 1] = v.micros
  }

  protected growValues(capacity: number): void {
    this.big = grown(this.big, capacity * 2)
    this.ints = new Int32Array(this.big.buffer)
  }

  column(rows: number): NativeColumn {
    return { fixed: bytesOf(this.big, rows, 16), validity: this.validity(rows) }
  }
}

/**
 * Values carried as one string and UTF-16 offsets: TEXT, VARCHAR(n),
 * CHAR(n), JSON (a `string`) and NUMERIC (exact decimal text, parsed by the
 * native layer at the column's scale: rounding is an error).
 */
abstract class TextLikeBuilder extends ColumnBuilder {
  /** Row `i`'s string (`''` for NULL), written by slot so a refused row leaves nothing behind. */
  protected readonly parts: string[] = []
  protected offsets: Uint32Array

  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c.name, c.sqlType, c.nullable !== false, start, capacity)
    this.offsets = new Uint32Array(capacity + 1)
  }

  override get varies(): boolean {
    return true
  }

  protected push(s: string, row: number): void {
    this.parts[row] = s
    this.offsets[row + 1] = this.offsets[row] + s.length
    this.start.units += s.length
  }

  protected pushNull(v: unknown, row: number, expected: string): void {
    this.setNull(v, row, expected)
    this.push('', row)
  }

  protected growValues(capacity: number): void {
    this.offsets = grown(this.offsets, capacity + 1)
  }

  column(rows: number): NativeColumn {
    this.parts.length = rows
    return { text: this.parts.join(''), offsets: this.offsets.subarray(0, rows + 1), validity: this.validity(rows) }
  }
}

/**
 * Mean UTF-16 units a value from which a text batch is written value by
 * value rather than joined first: a write costs ~130 ns, which joining
 * beats on short values (10-byte values: 4 against 8 ms a 64K-row batch)
 * and loses to from ~40 units on.
 */
const LONG_TEXT_UNITS = 64

class TextBuilder extends TextLikeBuilder {
  /** VARCHAR(n) / CHAR(n): at most n characters (code points). */
  private readonly maxLength: number
  /** CHAR(n), whose spaces past n are dropped. */
  private readonly pads: boolean
  /** The UTF-8 of an ASCII batch, reused batch after batch (the native side copies it). */
  private ascii: Buffer = Buffer.alloc(0)

  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c, start, capacity)
    const m = /^(VARCHAR|CHAR)\((\d+)\)$/.exec(c.sqlType)
    this.maxLength = m === null ? Infinity : Number(m[2])
    this.pads = m?.[1] === 'CHAR'
  }

  set(v: unknown, row: number): void {
    if (typeof v === 'string') {
      this.push(v.length > this.maxLength ? this.fit(v, row) : v, row)
    } else {
      this.pushNull(v, row, 'a string')
    }
  }

  /**
   * A batch of ASCII text, whose UTF-8 bytes are its UTF-16 units one for
   * one (offsets included), crosses as those bytes: the native side then
   * neither copies the text out as UTF-16 nor narrows it back (64 KB
   * values: most of the insert's CPU went there). Other text, a lone
   * surrogate too (3 bytes as UTF-8), crosses as UTF-16 and is checked
   * there.
   */
  override column(rows: number): NativeColumn {
    const units = this.offsets[rows] as number
    if (units >= rows * LONG_TEXT_UNITS) {
      const bytes = this.asciiValues(rows, units)
      if (bytes !== null) return { bytes, offsets: this.offsets.subarray(0, rows + 1), validity: this.validity(rows) }
    }
    const column = super.column(rows)
    const text = column.text ?? ''
    if (text.length === 0 || Buffer.byteLength(text, 'utf8') !== text.length) return column
    const written = this.asciiBuffer(text.length).write(text, 0, text.length, 'latin1')
    return { bytes: this.ascii.subarray(0, written), offsets: column.offsets, validity: column.validity }
  }

  /**
   * Long values written one by one as UTF-8, `null` at the first that is
   * not ASCII: one pass over the text where joining it first made a copy
   * in fresh V8 memory and `byteLength` a scan (64 KB values: 0.12-0.16
   * against 1.6-1.9 ms a MB). A value is ASCII when it writes as many
   * bytes as it has units; 4 bytes to spare past the batch's units keep a
   * value cut short by the end of the buffer from passing for one.
   */
  private asciiValues(rows: number, units: number): Buffer | null {
    const buffer = this.asciiBuffer(units + 4)
    let at = 0
    for (let row = 0; row < rows; row++) {
      const value = this.parts[row] as string
      const written = buffer.write(value, at, buffer.length - at, 'utf8')
      if (written !== value.length) return null
      at += written
    }
    return buffer.subarray(0, at)
  }

  /** The kept buffer, grown to at least `bytes`. */
  private asciiBuffer(bytes: number): Buffer {
    if (this.ascii.length < bytes) this.ascii = Buffer.allocUnsafe(bytes)
    return this.ascii
  }

  /**
   * What the column stores for a long `v`, as the Rust crate's
   * `SqlType::fit_text` decides: `v` when it has at most n characters; for
   * CHAR(n), its first n when the rest are all spaces; else a refusal.
   */
  private fit(v: string, row: number): string {
    const chars = [...v]
    if (chars.length <= this.maxLength) return v
    if (this.pads && chars.slice(this.maxLength).every((c) => c === ' ')) {
      return chars.slice(0, this.maxLength).join('')
    }
    throw this.refuse(ErrorCode.STRING_DATA_RIGHT_TRUNCATION, row, v, `longer than ${this.maxLength} characters`)
  }
}

/**
 * NUMERIC(p,s): decimal text, checked here against p and s (the native
 * layer parses it when the batch goes, and would fail the whole insert).
 */
class NumericBuilder extends TextLikeBuilder {
  private readonly precision: number
  private readonly scale: number

  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c, start, capacity)
    const m = /^NUMERIC\((\d+),\s*(\d+)\)$/.exec(c.sqlType)
    this.precision = m === null ? 38 : Number(m[1])
    this.scale = m === null ? 0 : Number(m[2])
  }

  set(v: unknown, row: number): void {
    let text: string
    if (typeof v === 'string') {
      text = v
    } else if (v instanceof HyperNumeric) {
      text = v.value
    } else if (typeof v === 'bigint') {
      text = String(v)
    } else if (typeof v === 'number' && Number.isFinite(v)) {
      text = plainDecimal(v)
    } else {
      this.pushNull(v, row, 'a decimal string, numeric(...), a bigint or a finite number')
      return
    }
    const fit = decimalFit(text, this.precision - this.scale, this.scale)
    if (fit === DecimalFit.NotANumber) {
      throw this.refuse(ErrorCode.INVALID_TEXT_REPRESENTATION, row, v, 'not a decimal number')
    }
    if (fit === DecimalFit.TooManyDecimals) {
      throw this.refuse(
        ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE,
        row,
        v,
        `more than ${this.scale} digits after the point (an insert does not round)`,
      )
    }
    if (fit === DecimalFit.TooManyIntegerDigits) {
      throw this.refuse(
        ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE,
        row,
        v,
        `more than ${this.precision - this.scale} digits before the point`,
      )
    }
    this.push(text, row)
  }
}

/** BYTEA, GEOGRAPHY: a `Uint8Array` (or `Buffer`). */
class BytesBuilder extends ColumnBuilder {
  /** Row `i`'s bytes (empty for NULL), by slot as in `TextLikeBuilder`. */
  private readonly parts: Uint8Array[] = []
  private offsets: Uint32Array
  private static readonly EMPTY = new Uint8Array(0)

  constructor(c: ColumnDef, start: BatchStart, capacity: number) {
    super(c.name, c.sqlType, c.nullable !== false, start, capacity)
    this.offsets = new Uint32Array(capacity + 1)
  }

  override get varies(): boolean {
    return true
  }

  set(v: unknown, row: number): void {
    if (v instanceof Uint8Array) {
      this.parts[row] = v
    } else {
      this.setNull(v, row, 'a Uint8Array or Buffer')
      this.parts[row] = BytesBuilder.EMPTY
    }
    this.offsets[row + 1] = this.offsets[row] + this.parts[row].length
    this.start.units += this.parts[row].length
  }

  protected growValues(capacity: number): void {
    this.offsets = grown(this.offsets, capacity + 1)
  }

  column(rows: number): NativeColumn {
    this.parts.length = rows
    return {
      bytes: Buffer.concat(this.parts),
      offsets: this.offsets.subarray(0, rows + 1),
      validity: this.validity(rows),
    }
  }
}

/** The builder for column `c` (its type spelled as hyperd spells it). */
export function columnBuilder(c: ColumnDef, start: BatchStart, capacity: number): ColumnBuilder {
  const t = c.sqlType
  switch (t) {
    case 'BOOLEAN':
      return new BoolBuilder(c, start, capacity)
    case 'SMALLINT':
      return new IntBuilder(c, start, capacity, Int16Array, -32768, 32767)
    case 'INTEGER':
      return new IntBuilder(c, start, capacity, Int32Array, -2147483648, 2147483647)
    case 'OID':
      return new IntBuilder(c, start, capacity, Uint32Array, 0, TWO_32 - 1)
    case 'BIGINT':
      return new BigIntBuilder(c, start, capacity)
    case 'REAL':
      return new RealBuilder(c, start, capacity)
    case 'DOUBLE PRECISION':
      return new FloatBuilder(c, start, capacity, Float64Array)
    case 'TEXT':
    case 'JSON':
      return new TextBuilder(c, start, capacity)
    case 'BYTEA':
    case 'GEOGRAPHY':
      return new BytesBuilder(c, start, capacity)
    case 'DATE':
      return new DateBuilder(c, start, capacity)
    case 'TIME':
      return new TimeBuilder(c, start, capacity)
    case 'TIMESTAMP':
    case 'TIMESTAMP WITH TIME ZONE':
      return new TimestampBuilder(c, start, capacity)
    case 'INTERVAL':
      return new IntervalBuilder(c, start, capacity)
  }
  if (t.startsWith('NUMERIC(')) return new NumericBuilder(c, start, capacity)
  if (t.startsWith('VARCHAR(') || t.startsWith('CHAR(')) return new TextBuilder(c, start, capacity)
  throw new HyperError({ code: ErrorCode.FEATURE_NOT_SUPPORTED, message: `column \`${c.name}\`: cannot insert ${t}` })
}

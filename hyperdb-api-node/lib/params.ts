/**
 * Parameters (`$1`, `$2`, ...) tagged with their JS kind for the native
 * layer, which makes every exactness check (`number` becomes INT, BIGINT or
 * DOUBLE PRECISION; a `bigint` must fit 64 bits; a NUMERIC must parse).
 */
import type { Param } from './native'
import { HyperDate, HyperInterval, HyperNumeric, HyperTime, HyperTimestamp } from './values'
import { ErrorCode, HyperError } from './errors'
import { stringOf } from './options'

/** What a parameter may be. */
export type ParamValue =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | Date
  | Uint8Array
  | HyperNumeric
  | HyperTimestamp
  | HyperTime
  | HyperInterval
  | HyperDate

/**
 * A statement's parameters, its SQL text checked first: napi's own
 * refusal of a text that is no string named neither the argument nor
 * what it takes.
 */
export function statementParams(sql: unknown, values: readonly ParamValue[] | undefined): Param[] {
  stringOf(sql, 'the SQL text')
  return toParams(values)
}

function toParams(values: readonly ParamValue[] | undefined): Param[] {
  if (values === undefined) {
    return []
  }
  if (!Array.isArray(values)) {
    throw new HyperError({ code: ErrorCode.INVALID_PARAMETER_VALUE, message: 'params must be an array' })
  }
  // Holes of a sparse array are NULL, as `undefined` is.
  return Array.from(values, toParam)
}

function toParam(v: ParamValue, i: number): Param {
  switch (typeof v) {
    case 'undefined':
      return { kind: 'null' }
    case 'boolean':
      return { kind: 'boolean', boolean: v }
    case 'number':
      return { kind: 'number', number: v }
    case 'bigint':
      return { kind: 'bigint', bigint: v }
    case 'string':
      return { kind: 'string', text: wellFormed(v, i) }
  }
  if (v === null) return { kind: 'null' }
  if (v instanceof Date) return { kind: 'date', number: v.getTime() }
  if (v instanceof Uint8Array) return { kind: 'bytes', bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength) }
  if (v instanceof HyperNumeric) return { kind: 'numeric', text: v.value }
  if (v instanceof HyperTimestamp) return { kind: v.tz ? 'timestamptz' : 'timestamp', bigint: v.micros }
  if (v instanceof HyperTime) return { kind: 'time', bigint: v.micros }
  if (v instanceof HyperInterval) return { kind: 'interval', months: v.months, days: v.days, bigint: v.micros }
  if (v instanceof HyperDate) return { kind: 'dateonly', number: v.days }
  throw new HyperError({
    code: ErrorCode.INVALID_PARAMETER_VALUE,
    message: `parameter $${i + 1}: a ${Object.prototype.toString.call(v)} cannot be sent; see ParamValue`,
  })
}

/** `String.prototype.isWellFormed`, in Node since 20 (ES2024). */
type Checkable = string & { isWellFormed(): boolean }

/**
 * `text`, refused when it holds a lone UTF-16 surrogate: the conversion to
 * UTF-8 would turn it into U+FFFD, a value other than the one given (the
 * inserters refuse it too).
 */
function wellFormed(text: string, i: number): string {
  if ((text as Checkable).isWellFormed()) {
    return text
  }
  // Iterating by code points keeps pairs together; a lone half is alone.
  const lone = [...text].find((c) => c.length === 1 && c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdfff)
  const unit = lone?.charCodeAt(0) ?? 0
  throw new HyperError({
    code: ErrorCode.DATATYPE_MISMATCH,
    message:
      `parameter $${i + 1}: the string holds a lone UTF-16 surrogate ` +
      `(0x${unit.toString(16).toUpperCase()}), which is not text`,
  })
}

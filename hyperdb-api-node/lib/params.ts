/**
 * Parameters (`$1`, `$2`, ...) tagged with their JS kind for the native
 * layer, which makes every exactness check (`number` becomes INT, BIGINT or
 * DOUBLE PRECISION; a `bigint` must fit 64 bits; a NUMERIC must parse).
 */
import type { Param } from './native'
import { HyperDate, HyperInterval, HyperNumeric, HyperTime, HyperTimestamp } from './values'
import { ErrorCode, HyperError } from './errors'

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

export function toParams(values: readonly ParamValue[] | undefined): Param[] {
  if (values === undefined) {
    return []
  }
  if (!Array.isArray(values)) {
    throw new HyperError({ code: ErrorCode.INVALID_PARAMETER_VALUE, message: 'params must be an array' })
  }
  return values.map(toParam)
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
      return { kind: 'string', text: v }
  }
  if (v === null) return { kind: 'null' }
  if (v instanceof Date) return { kind: 'date', number: v.getTime() }
  if (v instanceof Uint8Array) return { kind: 'bytes', bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength) }
  if (v instanceof HyperNumeric) return { kind: 'numeric', text: v.value }
  if (v instanceof HyperTimestamp) return { kind: v.tz ? 'timestamptz' : 'timestamp', bigint: v.micros }
  if (v instanceof HyperTime) return { kind: 'time', bigint: v.micros }
  if (v instanceof HyperInterval) return { kind: 'interval', months: v.months, days: v.days, bigint: v.micros }
  if (v instanceof HyperDate) return { kind: 'dateonly', text: v.value }
  throw new HyperError({
    code: ErrorCode.INVALID_PARAMETER_VALUE,
    message: `parameter $${i + 1}: a ${Object.prototype.toString.call(v)} cannot be sent; see ParamValue`,
  })
}

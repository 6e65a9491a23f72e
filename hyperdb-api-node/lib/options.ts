/**
 * Checks of option objects, so that a misspelt or mistyped option is an
 * error (22023) rather than silently ignored or misread: `queryTimeoutMS`
 * left statements without a timeout, and a `queryTimeoutMs` of `NaN` or
 * 0.5 became no time at all once converted to an integer.
 */
import { invalidArgument } from './errors'

/**
 * Refuses `options` when it is not an object (or `undefined`), or has a
 * key not in `known`; `what` names the call in the message.
 */
export function checkOptions(options: unknown, known: readonly string[], what: string): void {
  if (options === undefined) return
  if (!isRecord(options)) {
    throw invalidArgument(`the options of ${what} are an object, not ${kindOf(options)}`)
  }
  checkKeys(options, known, what, 'option')
}

/**
 * Refuses `record` when it has a key not in `known`: a misspelt key in a
 * table definition (`nullble`, `persistance`, a name's `schemaa`) was
 * ignored, and the table made nullable, permanent or in `public`. `what`
 * names the object and `noun` what its keys are.
 */
export function checkKeys(record: Record<string, unknown>, known: readonly string[], what: string, noun = 'key'): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) {
      throw invalidArgument(`${what} has no ${noun} ${JSON.stringify(key)} (it takes ${known.join(', ')})`)
    }
  }
}

/** What `value` is, for a refusal: `null`, `an array`, or its `typeof`. */
export function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
}

/** Whether `value` is an object that is neither `null` nor an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Refuses `value` unless it is an object (not `null`, not an array):
 * for the objects an argument or an option holds (a table definition, its
 * columns, `insertColumns`' columns), which were read unchecked and threw
 * a TypeError on `null`. `what` names it and `shape` says what it takes.
 */
export function checkRecord(value: unknown, what: string, shape: string): asserts value is Record<string, unknown> {
  if (!isRecord(value)) {
    throw invalidArgument(`${what} is ${shape}, not ${kindOf(value)}`)
  }
}

/**
 * The entries of a `Record<string, string>` option (`settings`,
 * `parameters`), or `undefined` when it is not given: `null` gave a
 * TypeError from `Object.entries`, and a value that is no string napi's
 * message, which named neither the option nor the key.
 */
export function stringEntries(value: unknown, name: string): Array<[string, string]> | undefined {
  if (value === undefined) return undefined
  checkRecord(value, name, "an object of strings (e.g. { name: 'value' })")
  return Object.entries(value).map(([key, v]) => [key, stringOf(v, `${name}.${key}`)])
}

/** `value`, refused unless a string; `what` names it. */
export function stringOf(value: unknown, what: string): string {
  if (typeof value === 'string') return value
  throw invalidArgument(`${what} is a string, not ${kindOf(value)}`)
}

/** `value`, refused unless a boolean; `what` names it. */
export function booleanOf(value: unknown, what: string): boolean {
  if (typeof value === 'boolean') return value
  throw invalidArgument(`${what} is a boolean, not ${kindOf(value)}`)
}

/** `value` as a refusal shows it: a string quoted, so that `'5'` is not read as 5. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  return String(value)
}

/** `value`, refused unless a string or `undefined`; `what` names it. */
export function optionalString(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : stringOf(value, what)
}

/** A flag option: `undefined` is false; anything but a boolean is refused. */
export function flagOf(value: unknown, what: string): boolean {
  return value === undefined ? false : booleanOf(value, what)
}

/** `value`, refused unless an array of strings or `undefined`. */
export function optionalStrings(value: unknown, what: string): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value)) throw invalidArgument(`${what} is an array of strings, not ${kindOf(value)}`)
  return value.map((v, i) => stringOf(v, `${what}[${i}]`))
}

/** The longest timeout an option takes: 2^31 - 1 ms, about 24.8 days. */
const MAX_MILLIS = 2 ** 31 - 1

/** Refuses a timeout that is not a whole number of milliseconds from 1 to 2^31 - 1. */
export function checkMillis(value: unknown, name: string): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_MILLIS) {
    throw invalidArgument(`${name} is a whole number of milliseconds from 1 to ${MAX_MILLIS}, not ${shown(value)}`)
  }
}

/** Refuses a value that is not a whole number from `min` to `max`. */
export function checkInteger(value: unknown, name: string, min: number, max: number): void {
  if (value !== undefined) requireInteger(value, name, min, max)
}

/** `value`, refused (22023) unless it is a whole number from `min` to `max`. */
export function requireInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`${name} is a whole number from ${min} to ${max}, not ${shown(value)}`)
  }
  return value
}

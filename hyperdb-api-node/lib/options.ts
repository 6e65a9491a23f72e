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
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidArgument(`${what} options are an object, not ${options === null ? 'null' : typeof options}`)
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw invalidArgument(`${what} has no option ${JSON.stringify(key)} (it takes ${known.join(', ')})`)
    }
  }
}

/** The longest timeout an option takes: 2^31 - 1 ms, about 24.8 days. */
const MAX_MILLIS = 2 ** 31 - 1

/** Refuses a timeout that is not a whole number of milliseconds from 1 to 2^31 - 1. */
export function checkMillis(value: unknown, name: string): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_MILLIS) {
    throw invalidArgument(`${name} is a whole number of milliseconds from 1 to ${MAX_MILLIS}, not ${String(value)}`)
  }
}

/** Refuses a value that is not a whole number from `min` to `max`. */
export function checkInteger(value: unknown, name: string, min: number, max: number): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`${name} is a whole number from ${min} to ${max}, not ${String(value)}`)
  }
}

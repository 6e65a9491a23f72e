// Helpers of the inserter tests: fresh tables, counts, and assertions on
// refused values (a HyperError with code, row and column).
import assert from 'node:assert/strict'
import { rejectsHyper, assertHyperError } from './helpers.mjs'

let tableCount = 0

/** A new table `(columns)` on `conn`; returns its name. */
export async function freshTable(conn, columns, name = `t${tableCount++}`) {
  await conn.executeCommand(`CREATE TABLE ${name} (${columns})`)
  return name
}

export async function count(conn, table) {
  return Number(await conn.queryScalar(`SELECT count(*) FROM ${table}`))
}

/** The connection still answers queries. */
export async function assertUsable(conn) {
  assert.equal(await conn.queryScalar('SELECT 41 + 1'), 42)
}

/** deepStrictEqual, with -0 kept apart from 0 and a readable label. */
export function sameValue(actual, expected, what) {
  assert.deepStrictEqual(actual, expected, what)
  if (Object.is(expected, -0)) assert.ok(Object.is(actual, -0), `${what}: -0 must stay -0`)
}

/**
 * Asserts that `fn` throws (synchronously) a HyperError with `code`,
 * `row` and `column`, whose message contains each of `names`.
 */
export function assertRefused(fn, { code, row, column, names = [] }, label = '') {
  let error
  assert.throws(fn, (e) => {
    error = e
    return true
  })
  assertRefusal(error, { code, row, column, names }, label)
  return error
}

export function assertRefusal(error, { code, row, column, names = [] }, label = '') {
  assertHyperError(error, code)
  assert.equal(error.row, row, `${label}: err.row (${error.message})`)
  assert.equal(error.column, column, `${label}: err.column (${error.message})`)
  for (const name of names) {
    assert.ok(error.message.includes(name), `${label}: the message names ${name}: ${error.message}`)
  }
}

export async function rejectsRefusal(promiseOrFn, expected, label = '') {
  const error = await rejectsHyper(promiseOrFn, expected.code, label)
  assertRefusal(error, expected, label)
  return error
}

/** `iso` (YYYY-MM-DD) at 00:00 UTC. */
export const utc = (iso) => new Date(`${iso}T00:00:00.000Z`)

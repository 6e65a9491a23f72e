// Shared setup for the test files: one hyperd per file, temp directories,
// and assertions for HyperError rejections.
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { HyperProcess, Connection, HyperError } from '../dist/index.mjs'

/** A fresh temporary directory (removed by `removeDir`). */
export function makeTempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'hyperdb-node-'))
}

export function removeDir(dir) {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
}

/**
 * Registers `before()` / `after()` hooks that start ONE hyperd for the
 * calling test file and a temp directory, and close/remove them (and every
 * connection opened through `ctx.connect`) at the end.
 *
 * Returns a context object whose fields are filled in by `before()`:
 * - `hyper`: the HyperProcess
 * - `dir`: the temp directory
 * - `connect(options)`: a Connection to a (new, by default) database in `dir`
 * - `dbPath(name)`: a path in `dir`
 */
export function setupHyper(processOptions = {}) {
  const ctx = {
    hyper: undefined,
    dir: undefined,
    starting: undefined,
    connections: [],
    dbCount: 0,
    dbPath(name) {
      return path.join(ctx.dir, name)
    },
    /** Starts hyperd (once); `before()` calls it, and so does `connect`. */
    ready() {
      ctx.starting ??= (async () => {
        ctx.dir = makeTempDir()
        ctx.hyper = await HyperProcess.start(processOptions)
      })()
      return ctx.starting
    },
    async connect(options = {}) {
      await ctx.ready()
      const conn = await Connection.connect({
        endpoint: ctx.hyper.endpoint,
        password: ctx.hyper.password,
        database: options.database ?? ctx.dbPath(`db${ctx.dbCount++}.hyper`),
        createMode: options.createMode ?? 'createIfNotExists',
        ...options,
      })
      ctx.connections.push(conn)
      return conn
    },
  }
  // Node 20 may run a file's root-level before() hooks concurrently: every
  // user of ctx awaits ctx.ready() rather than relying on hook order.
  before(() => ctx.ready())
  after(async () => {
    if (ctx.starting !== undefined) await ctx.starting.catch(() => {})
    for (const c of ctx.connections) {
      try {
        // A failed test may leave a long statement running, and close()
        // waits for it: cancel it first, and do not wait forever.
        if (!c.isClosed) await withTimeout(c.cancel(), 5000, 'cancel').catch(() => {})
        await withTimeout(c.close(), 10_000, 'close')
      } catch {
        // Already broken connections (e.g. a killed hyperd) may refuse to
        // close; hyper.close() below ends them anyway.
      }
    }
    if (ctx.hyper !== undefined) await ctx.hyper.close()
    removeDir(ctx.dir)
  })
  return ctx
}

/**
 * Asserts that `promiseOrFn` rejects with a HyperError whose code is `code`
 * (a string, a RegExp, or an array of accepted codes). Returns the error.
 */
export async function rejectsHyper(promiseOrFn, code, message) {
  let error
  await assert.rejects(
    promiseOrFn,
    (err) => {
      error = err
      return true
    },
    message,
  )
  try {
    assertHyperError(error, code)
  } catch (e) {
    if (message !== undefined) e.message = `${message}: ${e.message}`
    throw e
  }
  return error
}

/** Asserts `err` is a HyperError with the given code (string, RegExp or array). */
export function assertHyperError(err, code) {
  assert.ok(err instanceof HyperError, `expected a HyperError, got ${err?.constructor?.name}: ${err?.stack ?? err}`)
  assert.ok(err instanceof Error, 'a HyperError is an Error')
  assert.equal(typeof err.code, 'string')
  if (code instanceof RegExp) {
    assert.match(err.code, code, `unexpected code ${err.code}: ${err.message}`)
  } else if (Array.isArray(code)) {
    assert.ok(code.includes(err.code), `code ${err.code} is none of ${code.join(', ')}: ${err.message}`)
  } else if (code !== undefined) {
    assert.equal(err.code, code, `unexpected code ${err.code}: ${err.message}`)
  }
}

/** Reads an async iterable to the end. */
export async function drain(iterable) {
  const out = []
  for await (const x of iterable) out.push(x)
  return out
}

/** Rejects when `promise` has not settled after `ms`. */
export function withTimeout(promise, ms, label = 'operation') {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not finish within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Calls `conn.cancel()` every 250 ms until `promise` settles (a single
 * cancel can miss a statement hyperd has not started yet), at most
 * `limitMs`. Resolves to [error or undefined, time it settled].
 */
export async function cancelUntilSettled(conn, promise, limitMs = 30_000) {
  let settled = false
  const outcome = promise.then(
    () => [undefined, performance.now()],
    (e) => [e, performance.now()],
  )
  outcome.finally(() => {
    settled = true
  })
  const deadline = performance.now() + limitMs
  let cancels = 0
  while (!settled && performance.now() < deadline) {
    cancels++
    await conn.cancel().catch(() => {})
    await Promise.race([outcome, sleep(250)])
  }
  if (!settled) throw new Error(`statement still running ${limitMs} ms after cancelling`)
  // A cancel that reaches hyperd after its statement ended can hit the next
  // one: let any extra cancel land before the caller goes on.
  if (cancels > 1) await sleep(500)
  return outcome
}

/**
 * A statement that runs for a long time (minutes) on hyperd, for cancel and
 * timeout tests.
 */
export const LONG_QUERY = 'SELECT count(*) FROM generate_series(1, 100000000000) a'

export { HyperProcess, Connection, HyperError }

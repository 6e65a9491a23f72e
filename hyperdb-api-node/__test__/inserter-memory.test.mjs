// A 10M-row insert from a generator keeps memory bounded: insertRows reads
// the source as batches are sent, so RSS stays flat however many rows go in.
//
// As in memory.test.mjs, the insert runs in a child process (this same file,
// started with HYPERDB_INSERTER_MEMORY_CHILD=1) connected to this file's
// hyperd: inside a node:test test, Node 20's async-context tracking makes
// every Promise several times slower (measured: an async generator's 10M
// rows take 33 s instead of 3 s), which would measure the harness rather
// than the package. The child samples its own RSS every 50 ms from a
// baseline taken right before the insert, and reports it as JSON; the
// parent then checks what was stored over a connection of its own.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { setupHyper } from './helpers.mjs'
import { Connection } from '../dist/index.mjs'

const ROWS = 10_000_000
const MiB = 1024 * 1024
const RSS_GROWTH_LIMIT = 256 * MiB
const TIME_LIMIT_MS = 30_000
/** Sum of 1..ROWS, exactly (5e13: well inside a double's exact range). */
const ID_SUM = (ROWS * (ROWS + 1)) / 2
/** i % 100 over 1..10M: 100000 full cycles of 0..99. */
const SENSOR_SUM = 100_000 * 4950
const CHILD_ENV = 'HYPERDB_INSERTER_MEMORY_CHILD'
const SELF = fileURLToPath(import.meta.url)

/**
 * The rows: one array, reused for every row (the inserter copies the values
 * out as it takes the row). `ts` is a number (a safe integer) into BIGINT.
 */
function* syncRows() {
  const row = [0, 0, 0, 0]
  for (let i = 1; i <= ROWS; i++) {
    row[0] = i
    row[1] = i % 100
    row[2] = i * 0.5
    row[3] = i * 1000
    yield row
  }
}

/** The same rows from an async generator (one promise a row). */
async function* asyncRows() {
  yield* syncRows()
}

/** The child: inserts ROWS rows into table m and prints one JSON line. */
async function child() {
  const [endpoint, database, kind] = process.argv.slice(2)
  const conn = await Connection.connect({ endpoint, database })
  globalThis.gc?.()
  const baseline = process.memoryUsage().rss
  let peak = baseline
  let samples = 0
  const sampler = setInterval(() => {
    samples++
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 50)
  const t0 = performance.now()
  const stored = await conn.insertRows('m', kind === 'async' ? asyncRows() : syncRows())
  const ms = performance.now() - t0
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)
  await conn.close()
  console.log(JSON.stringify({ kind, stored, ms, baseline, peak, samples }))
}

function runChild(endpoint, database, kind) {
  // The child is a plain process, not a node:test child.
  const env = { ...process.env, [CHILD_ENV]: '1' }
  delete env.NODE_TEST_CONTEXT
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', SELF, endpoint, database, kind],
      { env, timeout: 120_000, maxBuffer: 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`insert child (${kind}) failed: ${err.message}\n${stderr}`))
          return
        }
        resolve(JSON.parse(stdout.trim().split('\n').pop()))
      },
    )
  })
}

function registerTests() {
  const ctx = setupHyper()

  for (const kind of ['sync', 'async']) {
    test(`insertRows: 10M rows from a${kind === 'async' ? 'n async' : ''} generator, RSS growth under 256 MiB, exact count and sums`, async () => {
      const database = ctx.dbPath(`inserter-memory-${kind}.hyper`)
      const setup = await ctx.connect({ database, createMode: 'create' })
      await setup.executeCommand('CREATE TABLE m (id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION, ts BIGINT)')
      // The child opens the file itself.
      await setup.close()

      const r = await runChild(ctx.hyper.endpoint, database, kind)
      console.log(
        `# insertRows 10M rows (${kind} generator): ${r.ms.toFixed(0)} ms, baseline RSS ` +
          `${(r.baseline / MiB).toFixed(0)} MiB, peak ${(r.peak / MiB).toFixed(0)} MiB, growth ` +
          `${((r.peak - r.baseline) / MiB).toFixed(1)} MiB (${r.samples} samples)`,
      )
      assert.equal(r.stored, ROWS)
      assert.ok(r.samples >= 5, `RSS sampled ${r.samples} times during the insert`)
      assert.ok(
        r.peak - r.baseline < RSS_GROWTH_LIMIT,
        `peak RSS growth ${((r.peak - r.baseline) / MiB).toFixed(0)} MiB (limit 256 MiB)`,
      )
      assert.ok(r.ms < TIME_LIMIT_MS, `the insert took ${r.ms.toFixed(0)} ms (limit ${TIME_LIMIT_MS} ms)`)

      const conn = await ctx.connect({ database, createMode: 'doNotCreate' })
      const [n, ids, sensors, values, ts] = await conn.queryOne(
        'SELECT count(*), sum(id::BIGINT), sum(sensor_id::BIGINT), sum(value), sum(ts) FROM m',
        [],
        { rowMode: 'array' },
      )
      assert.equal(n, BigInt(ROWS))
      assert.equal(ids, BigInt(ID_SUM))
      assert.equal(sensors, BigInt(SENSOR_SUM))
      assert.equal(values, ID_SUM / 2)
      assert.equal(ts, BigInt(ID_SUM) * 1000n)
      // Whole rows, spot-checked: the reused array's values at each row.
      assert.deepStrictEqual(
        await conn.queryAll('SELECT * FROM m WHERE id IN (1, 65536, 65537, 5000001, 10000000) ORDER BY id'),
        [
          { id: 1, sensor_id: 1, value: 0.5, ts: 1000n },
          { id: 65536, sensor_id: 36, value: 32768, ts: 65536000n },
          { id: 65537, sensor_id: 37, value: 32768.5, ts: 65537000n },
          { id: 5000001, sensor_id: 1, value: 2500000.5, ts: 5000001000n },
          { id: 10000000, sensor_id: 0, value: 5000000, ts: 10000000000n },
        ],
      )
      await conn.close()
    })
  }
}

if (process.env[CHILD_ENV] === '1') {
  await child()
} else {
  registerTests()
}

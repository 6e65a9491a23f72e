// gRPC reads against a real hyperd: the read styles over the default
// transfer mode (SYNC, on a server started with `grpc: true`, which does not
// persist results), ASYNC and ADAPTIVE on a server that persists them, and
// the typed errors where it does not.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import { setupHyper, rejectsHyper, LONG_QUERY } from './helpers.mjs'
import { GrpcConnection, HyperProcess } from '../dist/index.mjs'

const ctx = setupHyper({ grpc: true })
let database
// ~30 MB of Arrow: more than the first chunk ADAPTIVE sends inline.
const LARGE = 'SELECT g, g::text AS t FROM generate_series(1, 2000000) g'

before(async () => {
  const conn = await ctx.connect()
  await conn.executeCommand('CREATE TABLE items (id INTEGER NOT NULL, name TEXT, price DOUBLE PRECISION)')
  await conn.executeCommand("INSERT INTO items SELECT g, 'item ' || g, g * 0.25 FROM generate_series(1, 5000) s(g)")
  database = ctx.dbPath('db0.hyper')
  await conn.close()
})

function grpc(endpoint, transferMode) {
  return GrpcConnection.connect({ endpoint, database, transferMode })
}

/** Reads `items` through every style and checks the answers. */
async function readsItems(c) {
  const rows = await c.queryAll('SELECT id, name, price FROM items ORDER BY id')
  assert.equal(rows.length, 5000)
  assert.deepEqual(rows[41], { id: 42, name: 'item 42', price: 10.5 })
  let n = 0
  for await (const chunk of c.queryColumns('SELECT id FROM items')) {
    assert.ok(chunk.columns[0].values instanceof Int32Array)
    n += chunk.numRows
  }
  assert.equal(n, 5000)
  const table = await c.queryArrowTable('SELECT sum(price) AS total FROM items')
  assert.equal(table.getChild('total').get(0), 3125625)
  assert.equal(await c.queryScalar('SELECT count(*) FROM items WHERE id > $1', [4990]), 10n)
}

describe('gRPC on a server started with grpc: true', () => {
  test('the default mode (sync) reads every style, a large result too', async () => {
    await ctx.ready()
    const c = await grpc(ctx.hyper.grpcEndpoint)
    await readsItems(c)
    let n = 0
    for await (const batch of c.queryArrow(LARGE)) n += batch.numRows
    assert.equal(n, 2_000_000)
  })

  test('async and adaptive need persisted results: 55000, naming the setting', async () => {
    await ctx.ready()
    const async_ = await grpc(ctx.hyper.grpcEndpoint, 'async')
    const e = await rejectsHyper(async_.queryScalar('SELECT 1'), '55000')
    assert.match(`${e.message} ${e.hint ?? ''}`, /grpc_persist_results/)
    const adaptive = await grpc(ctx.hyper.grpcEndpoint, 'adaptive')
    // A small result comes inline; a large one is fetched from storage.
    assert.equal(await adaptive.queryScalar('SELECT 7'), 7)
    await rejectsHyper(adaptive.queryArrowTable(LARGE), '55000')
    assert.equal(await adaptive.queryScalar('SELECT 8'), 8)
  })

  test('bad input: an unknown transfer mode, a syntax error', async () => {
    await ctx.ready()
    await rejectsHyper(grpc(ctx.hyper.grpcEndpoint, 'eventually'), '22023')
    const c = await grpc(ctx.hyper.grpcEndpoint)
    await rejectsHyper(c.queryAll('SELEC 1'), '42601')
    assert.equal(await c.queryScalar('SELECT 9'), 9)
  })

  test('queryTimeoutMs ends a long query with HYT00; the connection runs the next one', async () => {
    await ctx.ready()
    const c = await GrpcConnection.connect({
      endpoint: ctx.hyper.grpcEndpoint,
      database,
      queryTimeoutMs: 300,
      connectTimeoutMs: 5000,
    })
    const t0 = performance.now()
    const err = await rejectsHyper(c.queryScalar(LONG_QUERY), 'HYT00')
    const took = performance.now() - t0
    assert.match(err.message, /300ms/)
    assert.ok(took >= 290 && took < 10_000, `rejected after ${took} ms`)
    // Each read style is bounded the same way.
    await rejectsHyper(c.queryAll(LONG_QUERY), 'HYT00')
    await rejectsHyper(c.queryArrowTable(LONG_QUERY), 'HYT00')
    assert.equal(await c.queryScalar('SELECT count(*) FROM items'), 5000n)
  })

  test('queryTimeoutMs ends a query whose server never answers', async () => {
    // Accepts the connection and reads, but never writes a byte: without
    // a timeout the query would wait forever.
    const silent = net.createServer((s) => s.on('data', () => {})).listen(0, '127.0.0.1')
    await new Promise((resolve) => silent.on('listening', resolve))
    try {
      const endpoint = `http://127.0.0.1:${silent.address().port}`
      const c = await GrpcConnection.connect({ endpoint, queryTimeoutMs: 300 })
      await rejectsHyper(c.queryScalar('SELECT 1'), 'HYT00')
      await c.close()
    } finally {
      silent.close()
    }
  })

  test('timeouts that are not whole milliseconds from 1 to 2^31 - 1 are refused (22023)', async () => {
    await ctx.ready()
    const endpoint = ctx.hyper.grpcEndpoint
    for (const bad of [0, -5, 1.5, NaN, 2 ** 31, '100', null]) {
      const e1 = await rejectsHyper(GrpcConnection.connect({ endpoint, queryTimeoutMs: bad }), '22023')
      assert.match(e1.message, /queryTimeoutMs/)
      const e2 = await rejectsHyper(GrpcConnection.connect({ endpoint, connectTimeoutMs: bad }), '22023')
      assert.match(e2.message, /connectTimeoutMs/)
    }
  })

  test('statements that write are refused before sending (22023); the table is unchanged', async () => {
    await ctx.ready()
    const c = await grpc(ctx.hyper.grpcEndpoint)
    const before = await c.queryScalar('SELECT count(*) FROM items')
    for (const sql of [
      "INSERT INTO items VALUES (-1, 'x', 1)",
      'DELETE FROM items',
      'CREATE TABLE u (x INT)',
      'WITH q AS (SELECT 1) DELETE FROM items',
      'WITH d AS (DELETE FROM items RETURNING 1) SELECT count(*) FROM d',
    ]) {
      const e = await rejectsHyper(() => c.queryAll(sql), '22023', sql)
      assert.match(e.message, /gRPC runs queries/)
    }
    assert.equal(await c.queryScalar('SELECT count(*) FROM items'), before)
  })

  test('close(): later calls reject with 08003; Symbol.asyncDispose closes', async () => {
    await ctx.ready()
    const c = await grpc(ctx.hyper.grpcEndpoint)
    assert.equal(await c.queryScalar('SELECT 10'), 10)
    await c.close()
    assert.equal(c.isClosed, true)
    await rejectsHyper(() => c.queryScalar('SELECT 1'), '08003')
    await rejectsHyper(() => c.cancel(), '08003')
    // What `await using` calls (Node 20 does not parse the statement).
    const d = await grpc(ctx.hyper.grpcEndpoint)
    assert.equal(await d.queryScalar('SELECT 11'), 11)
    await d[Symbol.asyncDispose]()
    assert.equal(d.isClosed, true)
  })

  test('calls made before close() run: describe, queryScalar, queryArrowIpc', async () => {
    await ctx.ready()
    const c = await grpc(ctx.hyper.grpcEndpoint)
    const calls = [c.queryScalar('SELECT 13'), c.describe('SELECT 1 AS a'), c.queryArrowTable('SELECT 14 AS b')]
    await c.close()
    const [scalar, columns, table] = await Promise.all(calls)
    assert.equal(scalar, 13)
    assert.equal(columns[0].name, 'a')
    assert.equal(table.getChild('b').get(0), 14)
    await rejectsHyper(() => c.queryScalar('SELECT 1'), '08003')
  })

  test('an abort cancels its own query, not one started after it on the connection', async () => {
    await ctx.ready()
    const c = await grpc(ctx.hyper.grpcEndpoint)
    for (const style of ['query', 'queryArrow']) {
      const ac = new AbortController()
      const open = (sql, signal) =>
        style === 'query'
          ? c.query(sql, undefined, { signal, rowMode: 'array' })
          : c.queryArrow(sql, undefined, { signal })
      const a = open('SELECT g FROM generate_series(1, 100000000000) g', ac.signal)[Symbol.asyncIterator]()
      await a.next()
      // B starts after A: the connection's latest query.
      let rows = 0
      const b = (async () => {
        for await (const _ of c.query('SELECT g FROM generate_series(1, 3000000) g', undefined, { rowMode: 'array' }))
          rows++
      })()
      await new Promise((r) => setTimeout(r, 100))
      ac.abort()
      await rejectsHyper(() => a.next(), '57014', style)
      await b
      assert.equal(rows, 3000000, `${style}: B, never aborted, read to its end`)
    }
    await c.close()
  })

  test('close() releases the channel at once, while the object is still referenced; an open result reads on', async () => {
    await ctx.ready()
    const sockets = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')
        } catch {
          return false // closed meanwhile
        }
      }).length
    const before = sockets()
    const held = []
    for (let i = 0; i < 10; i++) {
      const c = await grpc(ctx.hyper.grpcEndpoint)
      assert.equal(await c.queryScalar('SELECT 12'), 12)
      await c.close()
      held.push(c)
    }
    // Each connection had a socket of its own; closed, none is left.
    let now = sockets()
    for (let wait = 0; now > before && wait < 50; wait++) {
      await new Promise((r) => setTimeout(r, 20))
      now = sockets()
    }
    assert.ok(now <= before, `sockets: ${before} before, ${now} after closing 10 held connections`)
    // A result opened before close() reads to its end.
    const c = await grpc(ctx.hyper.grpcEndpoint)
    const rows = c.query('SELECT g FROM generate_series(1, 100000) g', undefined, { rowMode: 'array' })
    const first = await rows.next()
    await c.close()
    let n = first.done ? 0 : 1
    for await (const _ of rows) n++
    assert.equal(n, 100000)
    assert.equal(held.length, 10)
  })
})

describe('gRPC on a server that persists results', () => {
  let persisting
  before(async () => {
    await ctx.ready()
    persisting = await HyperProcess.start({ grpc: true, parameters: { grpc_persist_results: 'true' } })
  })
  after(async () => {
    await persisting?.close()
  })

  for (const mode of ['sync', 'async', 'adaptive']) {
    test(`${mode}: every style, and a result of many chunks`, async () => {
      const c = await grpc(persisting.grpcEndpoint, mode)
      await readsItems(c)
      let n = 0
      let sum = 0
      for await (const rows of c.queryChunks(LARGE, [], { rowMode: 'array' })) {
        for (const r of rows) sum += r[0]
        n += rows.length
      }
      assert.equal(n, 2_000_000)
      assert.equal(sum, (2_000_000 * 2_000_001) / 2)
    })
  }
})

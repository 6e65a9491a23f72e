// Streaming reads: abandoning a result, interleaved and concurrent calls,
// and every read style.
import { test, describe, before } from 'node:test'
import assert from 'node:assert/strict'
import * as arrow from 'apache-arrow'
import { tableFromIPC } from 'apache-arrow'
import { createRequire } from 'node:module'
import { setupHyper, rejectsHyper, drain, withTimeout } from './helpers.mjs'
import { Connection } from '../dist/index.mjs'

const ctx = setupHyper()
let conn

const TEN_MILLION = 'SELECT * FROM generate_series(1, 10000000)'

before(async () => {
  conn = await ctx.connect()
  await conn.executeCommand('CREATE TABLE items (id INTEGER NOT NULL, name TEXT, price DOUBLE PRECISION)')
  await conn.executeCommand("INSERT INTO items SELECT g, 'item ' || g, g * 0.25 FROM generate_series(1, 50000) s(g)")
})

/** Sum 1..n as a BigInt. */
const gauss = (n) => (BigInt(n) * BigInt(n + 1)) / 2n

/** The next query on `c` answers correctly; prints and returns how long it took. */
async function nextQueryTime(c, label) {
  const t0 = performance.now()
  const v = await withTimeout(c.queryScalar('SELECT $1::INTEGER + 1', [41]), 30_000, `${label}: next query`)
  const ms = performance.now() - t0
  assert.equal(v, 42)
  console.log(`# ${label}: next query answered in ${ms.toFixed(1)} ms`)
  assert.ok(ms < 30_000)
  return ms
}

describe('abandoning a 10M-row result', () => {
  test('break after 10 rows: the next query answers right away', async () => {
    let n = 0
    const seen = []
    for await (const row of conn.query(TEN_MILLION)) {
      seen.push(row.generate_series)
      if (++n === 10) break
    }
    assert.equal(n, 10)
    // hyperd produces generate_series in parallel: no order without ORDER BY.
    assert.equal(new Set(seen).size, 10)
    for (const v of seen) assert.ok(Number.isInteger(v) && v >= 1 && v <= 10_000_000, `${v}`)
    await nextQueryTime(conn, 'query + break')
    // And a full, exact read after it.
    assert.equal(await conn.queryScalar('SELECT count(*) FROM generate_series(1, 1000)'), 1000n)
  })

  test('an error thrown in the loop body: rethrown, and the next query answers right away', async () => {
    let n = 0
    await assert.rejects(
      async () => {
        for await (const _ of conn.query(TEN_MILLION, undefined, { rowMode: 'array' })) {
          if (++n === 10) throw new Error('boom in the loop')
        }
      },
      { message: 'boom in the loop' },
    )
    assert.equal(n, 10)
    await nextQueryTime(conn, 'query + throw')
  })

  test('queryChunks, queryColumns, queryArrow, queryArrowIpc: break after the first item', async () => {
    for (const [name, iterable] of [
      ['queryChunks', () => conn.queryChunks(TEN_MILLION)],
      ['queryColumns', () => conn.queryColumns(TEN_MILLION)],
      ['queryArrow', () => conn.queryArrow(TEN_MILLION)],
      ['queryArrowIpc', () => conn.queryArrowIpc(TEN_MILLION)],
    ]) {
      let items = 0
      for await (const _ of iterable()) {
        items++
        break
      }
      assert.equal(items, 1)
      await nextQueryTime(conn, `${name} + break`)
    }
  })

  test('iterator.return() after the first row releases the connection', async () => {
    const it = conn.query(TEN_MILLION)[Symbol.asyncIterator]()
    const first = await it.next()
    assert.equal(first.done, false)
    assert.deepStrictEqual(Object.keys(first.value), ['generate_series'])
    const done = await it.return()
    assert.equal(done.done, true)
    assert.deepStrictEqual(await it.next(), { value: undefined, done: true })
    await nextQueryTime(conn, 'return()')
  })
})

describe('concurrency', () => {
  test('two interleaved iterations on one connection both complete', async () => {
    const A = 300_000
    const B = 200_000
    const run = async () => {
      const a = conn.query(`SELECT g AS id FROM generate_series(1, ${A}) s(g)`)[Symbol.asyncIterator]()
      const b = conn
        .query('SELECT g AS id, g * 2 AS twice FROM generate_series(1, $1) s(g)', [B])
        [Symbol.asyncIterator]()
      let countA = 0
      let sumA = 0n
      let countB = 0
      let sumB = 0n
      let doneA = false
      let doneB = false
      while (!doneA || !doneB) {
        if (!doneA) {
          const r = await a.next()
          if (r.done) doneA = true
          else {
            countA++
            sumA += BigInt(r.value.id)
          }
        }
        if (!doneB) {
          const r = await b.next()
          if (r.done) doneB = true
          else {
            countB++
            sumB += BigInt(r.value.id)
            assert.equal(r.value.twice, r.value.id * 2)
          }
        }
      }
      return { countA, sumA, countB, sumB }
    }
    const r = await withTimeout(run(), 60_000, 'interleaved iteration')
    assert.deepStrictEqual(r, { countA: A, sumA: gauss(A), countB: B, sumB: gauss(B) })
    await nextQueryTime(conn, 'after interleaving')
  })

  test('a call made while a result is open on the same connection', async () => {
    // An open stream, then a scalar query before the stream is read on.
    const it = conn.query('SELECT id FROM items ORDER BY id')[Symbol.asyncIterator]()
    assert.deepStrictEqual((await it.next()).value, { id: 1 })
    assert.equal(await withTimeout(conn.queryScalar('SELECT count(*) FROM items'), 30_000, 'scalar'), 50000n)
    let n = 1
    let last = 1
    for (let r = await it.next(); !r.done; r = await it.next()) {
      n++
      assert.equal(r.value.id, last + 1)
      last = r.value.id
    }
    assert.equal(n, 50000)
  })

  test('four connections in parallel give correct results', async () => {
    const conns = await Promise.all([1, 2, 3, 4].map(() => ctx.connect()))
    const t0 = performance.now()
    const results = await withTimeout(
      Promise.all(
        conns.map(async (c, k) => {
          const n = 1_000_000 * (k + 1)
          const [sum, count, rows] = await Promise.all([
            c.queryScalar(`SELECT sum(g) FROM generate_series(1, ${n}) s(g)`),
            c.queryScalar('SELECT count(*) FROM generate_series(1, $1) s(g)', [n]),
            (async () => {
              let rowCount = 0
              let s = 0
              for await (const row of c.query(
                `SELECT g FROM generate_series(1, ${100_000 * (k + 1)}) s(g)`,
                undefined,
                {
                  rowMode: 'array',
                },
              )) {
                rowCount++
                s += row[0]
              }
              return { rowCount, s }
            })(),
          ])
          return { k, n, sum, count, rows }
        }),
      ),
      60_000,
      'parallel connections',
    )
    console.log(`# 4 connections in parallel: ${(performance.now() - t0).toFixed(0)} ms`)
    for (const { k, n, sum, count, rows } of results) {
      assert.equal(BigInt(sum), gauss(n), `connection ${k} sum`)
      assert.equal(count, BigInt(n), `connection ${k} count`)
      const m = 100_000 * (k + 1)
      assert.deepStrictEqual(rows, { rowCount: m, s: Number(gauss(m)) })
    }
    await Promise.all(conns.map((c) => c.close()))
  })

  test('concurrent calls on one connection each get their own answer', async () => {
    const results = await withTimeout(
      Promise.all(
        Array.from({ length: 10 }, (_, i) => conn.queryScalar('SELECT $1::INTEGER * 10 + $2::INTEGER', [i, i])),
      ),
      30_000,
      'concurrent calls',
    )
    assert.deepStrictEqual(
      results,
      Array.from({ length: 10 }, (_, i) => i * 11),
    )
    // Mixed kinds of calls, concurrently.
    const [count, one, all, cmd, arrow] = await withTimeout(
      Promise.all([
        conn.queryScalar('SELECT count(*) FROM items WHERE id <= $1', [100]),
        conn.queryOne('SELECT id, name FROM items WHERE id = $1', [7]),
        conn.queryAll('SELECT id FROM items WHERE id < 4 ORDER BY id'),
        conn.executeCommand('SELECT 1'),
        conn.queryArrowTable('SELECT id FROM items WHERE id <= 10'),
      ]),
      30_000,
      'mixed concurrent calls',
    )
    assert.equal(count, 100n)
    assert.deepStrictEqual(one, { id: 7, name: 'item 7' })
    assert.deepStrictEqual(all, [{ id: 1 }, { id: 2 }, { id: 3 }])
    assert.equal(typeof cmd, 'number')
    assert.equal(arrow.numRows, 10)
  })

  test('every read takes its place when made: a write made after it runs after it', async () => {
    // A promise's place is taken by the call, an iterator's by its first
    // next(). queryArrow and queryArrowTable once loaded apache-arrow first
    // and let the write overtake them.
    const reads = [
      ['queryScalar', (sql) => conn.queryScalar(sql)],
      ['queryOne', (sql) => conn.queryOne(sql, undefined, { rowMode: 'array' }).then((r) => r[0])],
      ['queryAll', (sql) => conn.queryAll(sql, undefined, { rowMode: 'array' }).then((r) => r[0][0])],
      [
        'query',
        (sql) =>
          conn
            .query(sql, undefined, { rowMode: 'array' })
            .next()
            .then((r) => r.value[0]),
      ],
      [
        'queryColumns',
        (sql) =>
          conn
            .queryColumns(sql)
            .next()
            .then((r) => r.value.columns[0].get(0)),
      ],
      [
        'queryArrow',
        (sql) =>
          conn
            .queryArrow(sql)
            .next()
            .then((r) => r.value.getChildAt(0).get(0)),
      ],
      ['queryArrowTable', (sql) => conn.queryArrowTable(sql).then((t) => t.getChildAt(0).get(0))],
    ]
    await conn.executeCommand('CREATE TEMPORARY TABLE call_order (i INT)')
    for (const [name, read] of reads) {
      await conn.executeCommand('TRUNCATE call_order')
      const before = read('SELECT count(*) FROM call_order')
      const write = conn.executeCommand('INSERT INTO call_order VALUES (1)')
      assert.equal(await before, 0n, `${name} saw a write made after it`)
      await write
      // Leaves no stream open behind the next round.
      await conn.queryScalar('SELECT 1')
    }
  })

  test('queryArrowTable of no rows keeps the columns, on both routes', async () => {
    for (const [sql, params] of [
      ['SELECT id, name FROM items WHERE id < 0', undefined],
      ['SELECT id, name FROM items WHERE id < $1', [0]],
    ]) {
      for (let run = 0; run < 3; run++) {
        const table = await conn.queryArrowTable(sql, params)
        assert.equal(table.numRows, 0, sql)
        assert.deepStrictEqual(
          table.schema.fields.map((f) => [f.name, String(f.type)]),
          [
            ['id', 'Int32'],
            ['name', 'Utf8'],
          ],
          sql,
        )
      }
    }
  })

  test('several consumers pulling one query iterator each get their own rows, in call order', async () => {
    for (const n of [10, 200_000]) {
      const it = conn
        .query(`SELECT i FROM generate_series(1, ${n}) g(i)`, [], { rowMode: 'array' })
        [Symbol.asyncIterator]()
      const seen = []
      const consumer = async () => {
        for (;;) {
          const r = await it.next()
          if (r.done) return
          seen.push(r.value[0])
          if (seen.length % 1000 === 0) await new Promise((resolve) => setImmediate(resolve))
        }
      }
      await withTimeout(Promise.all([consumer(), consumer(), consumer(), consumer()]), 60_000, 'four consumers')
      assert.equal(seen.length, n, `${n} rows: rows lost or repeated`)
      assert.equal(new Set(seen).size, n)
      // next() calls made together resolve in the order they were made.
      const it2 = conn
        .query('SELECT i FROM generate_series(1, 5) g(i)', [], { rowMode: 'array' })
        [Symbol.asyncIterator]()
      const pulled = await Promise.all(Array.from({ length: 7 }, () => it2.next()))
      assert.deepStrictEqual(
        pulled.map((r) => (r.done ? 'done' : r.value[0])),
        [1, 2, 3, 4, 5, 'done', 'done'],
      )
    }
  })
})

describe('read styles', () => {
  test('queryAll', async () => {
    const rows = await conn.queryAll('SELECT id, name, price FROM items WHERE id <= 3 ORDER BY id')
    assert.deepStrictEqual(rows, [
      { id: 1, name: 'item 1', price: 0.25 },
      { id: 2, name: 'item 2', price: 0.5 },
      { id: 3, name: 'item 3', price: 0.75 },
    ])
    const arrays = await conn.queryAll('SELECT id, name FROM items WHERE id <= 2 ORDER BY id', undefined, {
      rowMode: 'array',
    })
    assert.deepStrictEqual(arrays, [
      [1, 'item 1'],
      [2, 'item 2'],
    ])
    assert.deepStrictEqual(await conn.queryAll('SELECT id FROM items WHERE id < 0'), [])
    const big = await conn.queryAll('SELECT id FROM items ORDER BY id')
    assert.equal(big.length, 50000)
    assert.equal(big[49999].id, 50000)
  })

  test('queryOne: the first row, null on empty', async () => {
    assert.deepStrictEqual(await conn.queryOne('SELECT id, name FROM items ORDER BY id'), { id: 1, name: 'item 1' })
    assert.deepStrictEqual(
      await conn.queryOne('SELECT id, name FROM items WHERE id = $1', [42], { rowMode: 'array' }),
      [42, 'item 42'],
    )
    assert.equal(await conn.queryOne('SELECT id FROM items WHERE id < 0'), null)
    assert.equal(await conn.queryOne('SELECT id FROM items WHERE id = $1', [-1]), null)
    // The rest of a large result is discarded at once.
    const firstOfMany = await conn.queryOne(TEN_MILLION)
    assert.equal(typeof firstOfMany.generate_series, 'number')
    await nextQueryTime(conn, 'queryOne on 10M rows')
  })

  test('queryScalar: the first value, 02000 on empty', async () => {
    assert.equal(await conn.queryScalar('SELECT max(id) FROM items'), 50000)
    assert.equal(await conn.queryScalar('SELECT name FROM items WHERE id = $1', [5]), 'item 5')
    assert.equal(await conn.queryScalar('SELECT NULL::INTEGER'), null)
    await rejectsHyper(() => conn.queryScalar('SELECT id FROM items WHERE id < 0'), '02000')
    await rejectsHyper(() => conn.queryScalar('SELECT id FROM items WHERE id = $1', [-1]), '02000')
    assert.equal(await conn.queryScalar('SELECT 1'), 1)
  })

  test('after RESET ALL every read style still gets its values', async () => {
    // RESET ALL takes hyperd's result format back to text, which no SET
    // undoes: read as before, SELECT 1234 gave 875770417 from its second run.
    const c = await ctx.connect()
    await c.executeCommand('CREATE TABLE reset_t (a INTEGER, b TEXT)')
    await c.executeCommand("INSERT INTO reset_t VALUES (1234, 'x')")
    await c.executeCommand('RESET ALL')
    for (let i = 0; i < 6; i++) assert.equal(await c.queryScalar('SELECT 1234'), 1234)
    assert.deepEqual(await c.queryAll('SELECT a, b FROM reset_t', [], { rowMode: 'array' }), [[1234, 'x']])
    const def = await c.catalog.getTableDefinition('reset_t')
    assert.equal(def.columns[0].type, 'INTEGER')
    await c.close()
  })

  test('queryArrow keeps each column of a repeated name its own type', async () => {
    // Built by tableFromIPC, the schema gave both `a`s the last one's type:
    // 1.5 read as the BIGINT 4609434218613702656.
    const sql = "SELECT 1.5::DOUBLE PRECISION AS a, 7::BIGINT AS a, 'x' AS a"
    const table = await conn.queryArrowTable(sql)
    assert.deepEqual(
      table.schema.fields.map((f) => String(f.type)),
      ['Float64', 'Int64', 'Utf8'],
    )
    assert.deepEqual(
      [0, 1, 2].map((i) => table.getChildAt(i).get(0)),
      [1.5, 7n, 'x'],
    )
    for await (const batch of conn.queryArrow(sql)) {
      assert.deepEqual(
        [0, 1, 2].map((i) => batch.getChildAt(i).get(0)),
        [1.5, 7n, 'x'],
      )
    }
  })

  test('a statement whose table was made again is read afresh: an ARRAY after small rows', async () => {
    // Learnt as small rows, the statement stayed on the row route, which
    // reads no ARRAY: every later queryArrow of it failed (0A000).
    const c = await ctx.connect()
    await c.executeCommand('CREATE TEMPORARY TABLE remade AS SELECT 1 AS a')
    for (let i = 0; i < 3; i++) assert.equal((await c.queryArrowTable('SELECT * FROM remade')).numRows, 1)
    await c.executeCommand('DROP TABLE remade')
    await c.executeCommand('CREATE TEMPORARY TABLE remade AS SELECT ARRAY[1, 2] AS a')
    for (let i = 0; i < 3; i++) {
      const table = await c.queryArrowTable('SELECT * FROM remade')
      assert.deepEqual([...table.getChildAt(0).get(0)], [1, 2])
    }
    await c.close()
  })

  test('queryChunks: arrays of rows that add up to the result', async () => {
    let rows = 0
    let chunks = 0
    let sum = 0
    let expectId = 1
    for await (const chunk of conn.queryChunks('SELECT id FROM items ORDER BY id')) {
      assert.ok(Array.isArray(chunk))
      assert.ok(chunk.length > 0 && chunk.length <= 2048, `a chunk of ${chunk.length} rows`)
      chunks++
      for (const r of chunk) {
        assert.equal(r.id, expectId++)
        sum += r.id
      }
      rows += chunk.length
    }
    assert.equal(rows, 50000)
    assert.equal(sum, Number(gauss(50000)))
    assert.ok(chunks >= 25, `${chunks} chunks`)
    for await (const chunk of conn.queryChunks('SELECT id, name FROM items WHERE id <= 2 ORDER BY id', undefined, {
      rowMode: 'array',
    })) {
      assert.deepStrictEqual(chunk, [
        [1, 'item 1'],
        [2, 'item 2'],
      ])
    }
  })

  test('queryColumns over a larger result', async () => {
    let rows = 0
    let sum = 0
    for await (const chunk of conn.queryColumns('SELECT id, price FROM items ORDER BY id')) {
      const ids = chunk.column('id')
      const prices = chunk.column('price')
      assert.ok(ids.values instanceof Int32Array)
      assert.ok(prices.values instanceof Float64Array)
      assert.equal(ids.validity, null)
      for (let i = 0; i < chunk.numRows; i++) {
        sum += ids.values[i]
        assert.equal(prices.values[i], ids.values[i] * 0.25)
      }
      rows += chunk.numRows
    }
    assert.equal(rows, 50000)
    assert.equal(sum, Number(gauss(50000)))
  })

  test("queryColumns: chunks kept past the read hold their values; a batch's columns view one allocation", async () => {
    // A statement this connection has not run: served from hyperd's Arrow
    // stream (a repeated small one may come from DataRows, whose batches
    // the client builds a column at a time).
    const chunks = await drain(conn.queryColumns('SELECT id, price, name FROM items WHERE id > 0 ORDER BY id'))
    assert.ok(chunks.length > 1, `${chunks.length} chunks`)
    // Later reads (and collections) must not reuse what kept chunks view.
    await drain(conn.queryColumns('SELECT id, price, name FROM items WHERE id > 0 ORDER BY id DESC'))
    let next = 1
    let shared = 0
    for (const chunk of chunks) {
      const [ids, prices, names] = chunk.columns
      // One external buffer per received batch, not per column, when the
      // batch's message was received on its own (aligned). A batch that
      // arrived in the same receive as the schema message (the client
      // behind the server at the start, e.g. on a busy machine) lies
      // unaligned, and arrow-ipc copies each of its columns.
      if (ids.values.buffer === prices.values.buffer) shared++
      assert.equal(ids.values.byteOffset % 8, 0)
      assert.equal(prices.values.byteOffset % 8, 0)
      for (let i = 0; i < chunk.numRows; i++, next++) {
        assert.equal(ids.values[i], next)
        assert.equal(prices.values[i], next * 0.25)
        assert.equal(names.values[i], `item ${next}`)
      }
    }
    assert.equal(next, 50001)
    assert.ok(shared >= 1, `no chunk of ${chunks.length} has its columns in one allocation`)
  })

  test('results either side of the size copied into JS memory read alike, on both routes', async () => {
    // A handover region up to 64 KiB is copied, a larger one viewed in
    // place (src/handover.rs): 7,000 BIGINTs lie below that, 9,000 above.
    for (const n of [7000, 9000]) {
      const sql = `SELECT CASE WHEN g % 7 = 0 THEN NULL ELSE g::BIGINT * 3 END AS v FROM generate_series(1, ${n}) s(g)`
      // Twice: the first run is read from Arrow, a repeat may be read from DataRows.
      for (let run = 0; run < 2; run++) {
        const want = (g) => (g % 7 === 0 ? null : BigInt(g) * 3n)
        let g = 1
        for (const chunk of await drain(conn.queryColumns(sql))) {
          for (let i = 0; i < chunk.numRows; i++, g++)
            assert.equal(chunk.columns[0].get(i), want(g), `row ${g} of ${n}`)
        }
        assert.equal(g, n + 1)
        const rows = await conn.queryAll(sql, [], { rowMode: 'array' })
        assert.deepStrictEqual(
          rows.map((r) => r[0]),
          Array.from({ length: n }, (_, i) => want(i + 1)),
        )
        const table = await conn.queryArrowTable(sql)
        assert.equal(table.numRows, n)
        assert.equal(table.getChildAt(0).get(n - 1), want(n))
        assert.equal(table.getChildAt(0).get(6), null)
      }
    }
  })

  test('queryArrowTable: row count and values', async () => {
    const table = await conn.queryArrowTable('SELECT id, name FROM items ORDER BY id')
    assert.equal(table.numRows, 50000)
    assert.equal(table.numCols, 2)
    assert.deepStrictEqual(
      table.schema.fields.map((f) => f.name),
      ['id', 'name'],
    )
    assert.equal(table.getChild('id').get(49999), 50000)
    assert.equal(table.getChild('name').get(0), 'item 1')
    const empty = await conn.queryArrowTable('SELECT id FROM items WHERE id < 0')
    assert.equal(empty.numRows, 0)
    const withParam = await conn.queryArrowTable('SELECT id FROM items WHERE id <= $1', [25])
    assert.equal(withParam.numRows, 25)
  })

  test('queryArrow batches are ordinary apache-arrow RecordBatches', async () => {
    // Built without the RecordBatch constructor, over one buffer per
    // received message: every apache-arrow operation must still work.
    const sql = 'SELECT id, name, price, CASE WHEN id % 3 = 0 THEN NULL ELSE id END AS maybe FROM items ORDER BY id'
    const batches = await drain(conn.queryArrow(sql))
    assert.ok(batches.length > 1, 'several batches')
    for (const b of batches) {
      assert.ok(b instanceof arrow.RecordBatch)
      assert.equal(b.schema, batches[0].schema, 'one schema object for the result')
      assert.equal(b.numCols, 4)
    }
    const table = new arrow.Table(batches)
    assert.equal(table.numRows, 50000)
    // Through apache-arrow's own IPC writer and reader, and its slicing.
    const again = arrow.tableFromIPC(arrow.tableToIPC(table, 'stream'))
    assert.deepStrictEqual(
      again
        .toArray()
        .slice(0, 4)
        .map((r) => r.toJSON()),
      [
        { id: 1, name: 'item 1', price: 0.25, maybe: 1 },
        { id: 2, name: 'item 2', price: 0.5, maybe: 2 },
        { id: 3, name: 'item 3', price: 0.75, maybe: null },
        { id: 4, name: 'item 4', price: 1, maybe: 4 },
      ],
    )
    assert.equal(again.getChild('maybe').nullCount, 16666)
    assert.deepStrictEqual([...again.getChild('id').toArray()], [...table.getChild('id').toArray()])
    // (`selectAt`: apache-arrow 21's `select` by name mixes up columns on
    // any RecordBatch, its own included.)
    const sliced = batches[1].slice(2, 5).selectAt([1, 3])
    assert.deepStrictEqual(
      sliced.toArray().map((r) => r.toJSON()),
      [2, 3, 4].map((k) => {
        const id = batches[0].numRows + k + 1
        return { name: `item ${id}`, maybe: id % 3 === 0 ? null : id }
      }),
    )
  })

  test('queryArrowIpc: the chunks decode (tableFromIPC) to what queryArrow gives', async () => {
    const sql = 'SELECT id, name, price FROM items ORDER BY id'
    const chunks = []
    for await (const c of conn.queryArrowIpc(sql)) {
      assert.ok(c instanceof Uint8Array)
      chunks.push(c)
    }
    assert.ok(chunks.length >= 1)
    const bytes = Buffer.concat(chunks)
    const fromIpc = tableFromIPC(bytes)
    assert.equal(fromIpc.numRows, 50000)
    const batches = await drain(conn.queryArrow(sql))
    const viaArrow = { ids: [], names: [], prices: [] }
    for (const b of batches) {
      viaArrow.ids.push(...b.getChild('id').toArray())
      viaArrow.names.push(...b.getChild('name').toArray())
      viaArrow.prices.push(...b.getChild('price').toArray())
    }
    assert.deepStrictEqual([...fromIpc.getChild('id').toArray()], viaArrow.ids)
    assert.deepStrictEqual([...fromIpc.getChild('name').toArray()], viaArrow.names)
    assert.deepStrictEqual([...fromIpc.getChild('price').toArray()], viaArrow.prices)
    assert.equal(viaArrow.ids.length, 50000)
    assert.equal(viaArrow.names[9], 'item 10')
    // With a parameter (the row route) it is one IPC stream too.
    const small = tableFromIPC(
      Buffer.concat(await drain(conn.queryArrowIpc('SELECT id FROM items WHERE id <= $1', [3]))),
    )
    assert.deepStrictEqual([...small.getChild('id').toArray()], [1, 2, 3])
  })

  test('describe: names, SQL types, kinds, nullability, without reading rows', async () => {
    const cols = await conn.describe('SELECT id, name, price, id::BIGINT AS big FROM items')
    assert.deepStrictEqual(cols, [
      { name: 'id', sqlType: 'INTEGER', kind: 'int32', nullable: false },
      { name: 'name', sqlType: 'TEXT', kind: 'text', nullable: true },
      { name: 'price', sqlType: 'DOUBLE PRECISION', kind: 'float64', nullable: true },
      { name: 'big', sqlType: 'BIGINT', kind: 'int64', nullable: false },
    ])
    const withParam = await conn.describe('SELECT $1::VARCHAR(10) AS v, $2::NUMERIC(18,3) AS n', ['x', null])
    assert.deepStrictEqual(
      withParam.map((c) => [c.name, c.sqlType, c.kind]),
      [
        ['v', 'VARCHAR(10)', 'text'],
        ['n', 'NUMERIC(18,3)', 'numeric'],
      ],
    )
    // Other statements are described, never run.
    await conn.executeCommand('CREATE TABLE described (id INTEGER NOT NULL)')
    await conn.executeCommand('INSERT INTO described VALUES (1), (2)')
    assert.deepStrictEqual(await conn.describe('DELETE FROM described'), [])
    assert.deepStrictEqual(await conn.describe('INSERT INTO described VALUES ($1)', [3]), [])
    assert.deepStrictEqual(await conn.describe('CREATE TABLE never_made (x INT)'), [])
    assert.equal(await conn.queryScalar('SELECT count(*) FROM described'), 2n)
    assert.equal(await conn.catalog.hasTable('never_made'), false)
    assert.deepStrictEqual(await conn.describe('DELETE FROM described RETURNING id'), [
      { name: 'id', sqlType: 'INTEGER', kind: 'int32', nullable: true },
    ])
    assert.equal(await conn.queryScalar('SELECT count(*) FROM described'), 2n)
    await rejectsHyper(() => conn.describe('DELETE FROM no_such_table'), '42P01')
    // describe on a huge result does not read it.
    const t0 = performance.now()
    assert.equal((await conn.describe(TEN_MILLION)).length, 1)
    await nextQueryTime(conn, 'describe on 10M rows')
    console.log(`# describe + next query on 10M rows: ${(performance.now() - t0).toFixed(1)} ms`)
  })
})

describe('the event loop', () => {
  test('query gives the loop turns within a batch of rows', async () => {
    // 10,000 rows (one or two batches) on which the loop body spends ~20 us
    // each. Rows within a batch resolve in microtasks, so a timer runs
    // before the batch ends only if the row iterator itself gives the loop
    // a turn; between batches alone it would tick once or twice.
    for (const rowMode of ['object', 'array']) {
      let ticks = 0
      const timer = setInterval(() => ticks++, 1)
      try {
        let n = 0
        let atFirstRow = 0
        for await (const _ of conn.query('SELECT i FROM generate_series(1, 10000) g(i)', [], { rowMode })) {
          if (n++ === 0) atFirstRow = ticks
          const until = performance.now() + 0.02
          while (performance.now() < until) {
            // the consumer's own work
          }
        }
        assert.equal(n, 10_000)
        const during = ticks - atFirstRow
        console.log(`# ${rowMode} rows: ${during} ticks of a 1 ms interval while reading them`)
        assert.ok(during >= 5, `${rowMode}: the loop ticked ${during} times in ~200 ms of row work`)
      } finally {
        clearInterval(timer)
      }
    }
  })
})

describe('CommonJS and ESM share one implementation', () => {
  test('Connection from the ESM entry is the CommonJS class', async () => {
    const { createRequire } = await import('node:module')
    const require = createRequire(import.meta.url)
    const cjs = require('../dist/index.js')
    assert.equal(cjs.Connection, Connection)
    assert.ok(conn instanceof cjs.Connection)
  })
})

describe('calls across the boundary', () => {
  /** Counts the native `next` calls of result streams while `f` runs. */
  async function nativeNexts(f) {
    const addon = createRequire(import.meta.url)('../native/hyperdb-api.linux-x64-gnu.node')
    const proto = addon.NativeBatchStream.prototype
    const saved = { next: proto.next, nextArrow: proto.nextArrow }
    let calls = 0
    proto.next = function (...args) {
      calls++
      return saved.next.apply(this, args)
    }
    proto.nextArrow = function (...args) {
      calls++
      return saved.nextArrow.apply(this, args)
    }
    try {
      return { value: await f(), calls }
    } finally {
      Object.assign(proto, saved)
    }
  }

  test('a small result needs no call after its open; a large one streams on', async () => {
    const one = await nativeNexts(() => conn.queryAll('SELECT id, name FROM items WHERE id <= 3 ORDER BY id'))
    assert.deepEqual(
      one.value.map((r) => r.id),
      [1, 2, 3],
    )
    assert.equal(one.calls, 0, 'the open read the whole result')
    assert.deepEqual(await nativeNexts(() => conn.queryScalar('SELECT 7::INTEGER')), { value: 7, calls: 0 })
    const table = await nativeNexts(() => conn.queryArrowTable('SELECT 1::INTEGER AS a'))
    assert.deepEqual([table.value.numRows, table.calls], [1, 0])
    const none = await nativeNexts(() => conn.queryAll('SELECT id FROM items WHERE id < 0'))
    assert.deepEqual(none, { value: [], calls: 0 })
    // 2M rows: more batches than the open waits for, every row once.
    const big = await nativeNexts(async () => {
      let sum = 0n
      let n = 0
      for await (const chunk of conn.queryColumns('SELECT g::BIGINT AS g FROM generate_series(1, 2000000) s(g)')) {
        for (const v of chunk.column('g').values) sum += v
        n += chunk.numRows
      }
      return [n, sum]
    })
    assert.deepEqual(big.value, [2_000_000, gauss(2_000_000)])
    assert.ok(big.calls > 0, `${big.calls} calls`)
  })
})

// An inserter that is not executed commits nothing; a table definition
// that does not match the server's is refused; an insert by name that
// repeats the last one skips its lookup; calls made while an inserter is
// open wait for it.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper, rejectsHyper, assertHyperError, sleep, withTimeout } from './helpers.mjs'
import { freshTable, count, assertUsable, assertRefused } from './inserter-helpers.mjs'
import { Inserter, DEFAULT_BATCH_ROWS } from '../dist/index.mjs'

const ctx = setupHyper()

// ---------------------------------------------------------------------------
// Ending without execute

describe('an inserter that is not executed commits nothing', () => {
  test('cancel() after 100k rows: no row stored, later calls refused (22023)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    const ins = await conn.inserter(table)
    for (let k = 0; k < 100_000; k++) ins.addRow([k, `row ${k}`])
    assert.equal(ins.rowCount, 100_000)
    await ins.cancel()
    assert.equal(await count(conn, table), 0)
    assertRefused(() => ins.addRow([1, 'x']), { code: '22023', row: undefined, column: undefined })
    await rejectsHyper(() => ins.execute(), '22023')
    await ins.cancel() // twice is harmless
    await assertUsable(conn)
    // The table and the connection take a new insert.
    assert.equal(await conn.insertRows(table, [[7, 'seven']]), 1)
    assert.deepStrictEqual(await conn.queryAll(`SELECT * FROM ${table}`), [{ id: 7, s: 'seven' }])
  })

  test('conn.cancel() ends insertRows from an endless source at its next batch (57014), storing nothing', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    let produced = 0
    async function* endless() {
      for (;;) yield [produced++, 'x']
    }
    const inserting = conn.insertRows(table, endless())
    inserting.catch(() => undefined)
    while (produced < 200_000) await sleep(5)
    await conn.cancel()
    const at = produced
    await withTimeout(
      rejectsHyper(() => inserting, '57014'),
      10_000,
      'insertRows after cancel',
    )
    assert.ok(produced - at < 4 * DEFAULT_BATCH_ROWS, `${produced - at} rows taken after the cancel`)
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
    // addRow after a cancel: refused once the COPY has ended.
    const ins = await conn.inserter(table)
    for (let k = 0; k < DEFAULT_BATCH_ROWS; k++) ins.addRow([k, 'y'])
    await conn.cancel()
    const refused = await withTimeout(
      (async () => {
        for (let k = 0; ; k++) {
          try {
            ins.addRow([k, 'z'])
          } catch (e) {
            return e
          }
          if (k % 1000 === 0) await sleep(0)
        }
      })(),
      10_000,
      'addRow after cancel',
    )
    assert.equal(refused.code, '57014')
    await ins.cancel()
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
  })

  test('a source that stalls: queryTimeoutMs (HYT00) and conn.cancel() (57014) settle insertRows at once', async () => {
    for (const [how, code] of [
      ['queryTimeoutMs', 'HYT00'],
      ['cancel', '57014'],
    ]) {
      const conn = await ctx.connect(how === 'queryTimeoutMs' ? { queryTimeoutMs: 300 } : {})
      const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
      let release
      const never = new Promise((resolve) => {
        release = resolve
      })
      let produced = 0
      async function* stalls() {
        // More than a batch, so rows are on their way, then nothing.
        for (; produced < DEFAULT_BATCH_ROWS + 10; produced++) yield [produced, 'x']
        await never
      }
      const started = Date.now()
      const inserting = conn.insertRows(table, stalls())
      inserting.catch(() => undefined)
      if (how === 'cancel') {
        while (produced < DEFAULT_BATCH_ROWS + 10) await sleep(5)
        await sleep(50)
        await conn.cancel()
      }
      await withTimeout(
        rejectsHyper(() => inserting, code, how),
        10_000,
        `insertRows from a stalled source, ${how}`,
      )
      if (how === 'queryTimeoutMs') assert.ok(Date.now() - started >= 300, `${Date.now() - started} ms`)
      assert.equal(await count(conn, table), 0, how)
      await assertUsable(conn)
      release()
    }
  })

  test('cancel() while execute() commits waits for the commit, which stands', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    const ins = await conn.inserter(table)
    for (let k = 0; k < 1000; k++) ins.addRow([k, 'x'])
    const executing = ins.execute()
    await ins.cancel()
    assert.equal(await executing, 1000)
    assert.equal(await count(conn, table), 1000)
    await assertUsable(conn)
  })

  test('a refused batchRows (22023) opens nothing: the connection stays free', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    const def = await conn.catalog.getTableDefinition(table)
    for (const batchRows of [0, NaN, Infinity, 2 ** 40, 1.5, '10']) {
      await rejectsHyper(() => conn.inserter(table, { batchRows }), '22023', `by name, ${batchRows}`)
      await rejectsHyper(() => conn.insertRows(table, [[1, 'x']], { batchRows }), '22023', `insertRows, ${batchRows}`)
      assert.throws(
        () => new Inserter(conn, def, { batchRows }),
        (e) => e.code === '22023',
        `definition, ${batchRows}`,
      )
      await withTimeout(assertUsable(conn), 5000, `the connection after batchRows ${batchRows}`)
    }
    assert.equal(await count(conn, table), 0)
  })

  test('[Symbol.asyncDispose]() without execute stores nothing; after execute it keeps the rows', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    {
      const ins = await conn.inserter(table, { batchRows: 1000 })
      for (let k = 0; k < 5000; k++) ins.addRow([k, 'x'])
      await ins[Symbol.asyncDispose]()
      assertRefused(() => ins.addRow([1, 'x']), { code: '22023', row: undefined, column: undefined })
    }
    assert.equal(await count(conn, table), 0)
    {
      const ins = await conn.inserter(table)
      ins.addRow([1, 'kept'])
      assert.equal(await ins.execute(), 1)
      await ins[Symbol.asyncDispose]()
    }
    assert.deepStrictEqual(await conn.queryAll(`SELECT * FROM ${table}`), [{ id: 1, s: 'kept' }])
    await assertUsable(conn)
  })
})

// ---------------------------------------------------------------------------
// A definition that is not the server's

describe('new Inserter(conn, definition) checks the definition against the server', () => {
  /** Adds `rows` and executes; the first error (addRow or execute). */
  async function firstError(conn, definition, rows, options) {
    try {
      const ins = new Inserter(conn, definition, options)
      try {
        for (const row of rows) ins.addRow(row)
        await ins.execute()
      } catch (e) {
        await ins.cancel().catch(() => undefined)
        throw e
      }
    } catch (e) {
      return e
    }
    assert.fail('the insert was not refused')
  }

  const CASES = [
    {
      label: 'columns swapped',
      column: 'id',
      columns: [
        { name: 's', type: 'TEXT' },
        { name: 'id', type: 'INTEGER', nullable: false },
      ],
      row: ['x', 1],
    },
    {
      label: 'a type differs',
      column: 'id',
      columns: [
        { name: 'id', type: 'BIGINT', nullable: false },
        { name: 's', type: 'TEXT' },
      ],
      row: [1n, 'x'],
    },
    {
      label: 'the length of a VARCHAR differs',
      column: 's',
      columns: [
        { name: 'id', type: 'INTEGER', nullable: false },
        { name: 's', type: 'VARCHAR(10)' },
      ],
      row: [1, 'x'],
    },
    {
      label: 'nullability differs',
      column: 'id',
      columns: [
        { name: 'id', type: 'INTEGER' },
        { name: 's', type: 'TEXT' },
      ],
      row: [1, 'x'],
    },
    {
      label: 'a column missing',
      column: 's',
      columns: [{ name: 'id', type: 'INTEGER', nullable: false }],
      row: [1],
    },
  ]

  for (const c of CASES) {
    for (const batchRows of [undefined, 1]) {
      test(`${c.label}${batchRows === 1 ? ' (first push at addRow)' : ''}: 42804, nothing stored`, async () => {
        const conn = await ctx.connect()
        const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
        const e = await firstError(conn, { name: table, columns: c.columns }, [c.row, c.row, c.row], { batchRows })
        assertHyperError(e, '42804')
        assert.match(e.message, new RegExp(table))
        // The table's column where the two first differ, by name.
        assert.equal(e.column, c.column)
        assert.equal(await count(conn, table), 0)
        await assertUsable(conn)
        // The right definition works on the same connection.
        const ins = new Inserter(conn, {
          name: table,
          columns: [
            { name: 'id', type: 'INTEGER', nullable: false },
            { name: 's', type: 'TEXT' },
          ],
        })
        ins.addRow([1, 'ok'])
        assert.equal(await ins.execute(), 1)
        assert.equal(await count(conn, table), 1)
      })
    }
  }
})

describe("an insert by name repeating the connection's last one skips the lookup", () => {
  // Two connections to one file: `other` replaces the table between two
  // inserts of `conn`, where only hyperd's own check of the Arrow stream
  // (and the column count of the COPY's answer) can see it.
  async function pair() {
    const database = ctx.dbPath(`repeat${ctx.dbCount++}.hyper`)
    const conn = await ctx.connect({ database, createMode: 'createAndReplace' })
    const other = await ctx.connect({ database, createMode: 'doNotCreate' })
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    assert.equal(await conn.insertRows(table, [[1, 'a']]), 1)
    assert.equal(await conn.insertRows(table, [[2, 'b']]), 1)
    return { conn, other, table }
  }

  test('a column another connection changed is refused by the server (42804); nothing stored', async () => {
    const { conn, other, table } = await pair()
    await other.executeCommand(`DROP TABLE ${table}`)
    await other.executeCommand(`CREATE TABLE ${table} (id BIGINT NOT NULL, s TEXT)`)
    await rejectsHyper(() => conn.insertRows(table, [[3, 'c']]), '42804')
    assert.equal(await count(conn, table), 0)
    // Not a repeat any more: looked up, the new definition takes the row.
    assert.equal(await conn.insertRows(table, [[3n, 'c']]), 1)
    assert.deepStrictEqual(await conn.queryAll(`SELECT * FROM ${table}`), [{ id: 3n, s: 'c' }])
  })

  test('a column the table no longer has is refused by its count (42804); nothing stored', async () => {
    const { conn, other, table } = await pair()
    await other.executeCommand(`DROP TABLE ${table}`)
    await other.executeCommand(`CREATE TABLE ${table} (id INTEGER NOT NULL)`)
    await rejectsHyper(() => conn.insertRows(table, [[3, 'c']]), '42804')
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
  })

  test('after any other call the table is looked up again', async () => {
    const { conn, other, table } = await pair()
    await other.executeCommand(`DROP TABLE ${table}`)
    await other.executeCommand(`CREATE TABLE ${table} (id INTEGER NOT NULL)`)
    await assertUsable(conn)
    const ins = await conn.inserter(table)
    assert.deepStrictEqual(
      ins.columns.map((c) => c.name),
      ['id'],
    )
    ins.addRow([4])
    assert.equal(await ins.execute(), 1)
  })
})

// ---------------------------------------------------------------------------
// The connection's queue

describe('calls made while an inserter is open wait for it', () => {
  test('a query made before execute runs after it and sees every row', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, v DOUBLE PRECISION')
    const other = await freshTable(conn, 'id INTEGER')
    const ins = await conn.inserter(table)
    const first = 2 * DEFAULT_BATCH_ROWS + 17 // two batches already handed over
    for (let k = 0; k < first; k++) ins.addRow([k, k / 4])
    let settled = false
    const p = conn.queryOne(`SELECT count(*) AS n, sum(id) AS s FROM ${table}`)
    const q = conn.executeCommand(`INSERT INTO ${other} VALUES (1)`)
    p.finally(() => (settled = true)).catch(() => undefined)
    for (let k = first; k < first + 1000; k++) ins.addRow([k, k / 4])
    await sleep(300)
    assert.equal(settled, false, 'the query waited for the inserter')
    const total = first + 1000
    assert.equal(await ins.execute(), total)
    assert.deepStrictEqual(await p, { n: BigInt(total), s: BigInt((total * (total - 1)) / 2) })
    assert.equal(await q, 1)
    assert.equal(await count(conn, other), 1)
  })

  test('a query made before cancel runs after it and sees no row', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL')
    const ins = await conn.inserter(table)
    for (let k = 0; k < 100_000; k++) ins.addRow([k])
    const p = conn.queryScalar(`SELECT count(*) FROM ${table}`)
    await sleep(100)
    await ins.cancel()
    assert.equal(await p, 0n)
  })
})

describe("a call on the connection from inside its insert's row source", () => {
  // It would wait for the insert, which waits for the row: refused at once
  // (55006) instead of hanging, when the source makes it as it is asked for
  // its next row (a lookup per row, the common shape).
  test('is refused (55006); the insert stores nothing and the connection is free', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, name TEXT')
    async function* rows() {
      for (let k = 0; k < 3; k++) yield [k, await conn.queryScalar('SELECT $1::TEXT', [`name ${k}`])]
    }
    const err = await withTimeout(
      rejectsHyper(() => conn.insertRows(table, rows()), '55006'),
      10_000,
      'insertRows with a lookup on its own connection',
    )
    assert.match(err.message, /another connection/)
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
    // The same on an inserter's addRowsFrom, and for a statement.
    const ins = await conn.inserter(table)
    async function* commands() {
      await conn.executeCommand('SET search_path = public')
      yield [1, 'x']
    }
    await rejectsHyper(() => ins.addRowsFrom(commands()), '55006')
    await ins.cancel()
    await assertUsable(conn)
  })

  test('through a second connection it runs, and calls from other tasks wait for the insert', async () => {
    const conn = await ctx.connect()
    const lookups = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, name TEXT')
    async function* rows() {
      for (let k = 0; k < 3; k++) {
        await sleep(20)
        yield [k, await lookups.queryScalar('SELECT $1::TEXT', [`name ${k}`])]
      }
    }
    const inserting = conn.insertRows(table, rows())
    await sleep(5) // the source is waiting on its timer: this call is another task's
    const counted = count(conn, table)
    assert.equal(await inserting, 3)
    assert.equal(await counted, 3, 'the call queued behind the insert and saw its rows')
    assert.deepStrictEqual(
      (await conn.queryAll(`SELECT name FROM ${table} ORDER BY id`)).map((r) => r.name),
      ['name 0', 'name 1', 'name 2'],
    )
  })
})

// Refused insert values: each names its row, column and value, stores
// nothing, and leaves the inserter (before execute) and the connection
// usable; a batch refused at hand-over or at execute ends the insert with
// nothing stored.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper, rejectsHyper, assertHyperError, withTimeout } from './helpers.mjs'
import { freshTable, count, assertUsable, assertRefused, rejectsRefusal, utc } from './inserter-helpers.mjs'
import {
  HyperError,
  HyperTimestamp,
  HyperTime,
  HyperInterval,
  numeric,
  dateOnly,
  DEFAULT_BATCH_ROWS,
} from '../dist/index.mjs'

const ctx = setupHyper()

// ---------------------------------------------------------------------------
// Refused values

const R_SQL =
  'id INTEGER NOT NULL, i INTEGER, g BIGINT, dt DATE, vc VARCHAR(3), n5 NUMERIC(5,2), tx TEXT, r REAL, o OID'
const R_NAMES = ['id', 'i', 'g', 'dt', 'vc', 'n5', 'tx', 'r', 'o']
const goodRow = (k) => [
  k,
  k * 10,
  BigInt(k) * 1_000_000_000_000n,
  utc('2024-01-01'),
  '😀😀😀',
  '1.25',
  `ok ${k}`,
  0.5,
  k,
]
const goodBack = (k) => ({
  id: k,
  i: k * 10,
  g: BigInt(k) * 1_000_000_000_000n,
  dt: utc('2024-01-01'),
  vc: '😀😀😀',
  n5: '1.25',
  tx: `ok ${k}`,
  r: 0.5,
  o: k,
})
/** goodRow(k) with `changes` (by column name). */
function rowWith(k, changes) {
  const row = goodRow(k)
  for (const [name, v] of Object.entries(changes)) row[R_NAMES.indexOf(name)] = v
  return row
}
const objectOf = (row) => Object.fromEntries(R_NAMES.map((n, j) => [n, row[j]]))

/** A refusal of `value` in the NUMERIC(5,2) column. */
function numericRefusal(label, value, code, names) {
  return { label, row: rowWith(3, { n5: value }), code, column: 'n5', names }
}

/** Rows refused by addRow itself, as the 4th row of an insert (row 3). */
const SYNC_REFUSALS = [
  { label: 'a float into INTEGER', row: rowWith(3, { i: 1.5 }), code: '42804', column: 'i', names: ['1.5'] },
  { label: '2^40 into INTEGER', row: rowWith(3, { i: 2 ** 40 }), code: '22003', column: 'i', names: ['1099511627776'] },
  {
    label: 'a string into DATE',
    row: rowWith(3, { dt: '2024-01-01' }),
    code: '42804',
    column: 'dt',
    names: ['"2024-01-01"'],
  },
  {
    label: 'a number past 2^53 into BIGINT',
    row: rowWith(3, { g: 2 ** 53 + 2 }),
    code: '22003',
    column: 'g',
    names: ['9007199254740994'],
  },
  {
    label: '2^63 as bigint into BIGINT',
    row: rowWith(3, { g: 2n ** 63n }),
    code: '22003',
    column: 'g',
    names: ['9223372036854775808n'],
  },
  { label: 'null into NOT NULL', row: rowWith(3, { id: null }), code: '23502', column: 'id', names: ['null'] },
  {
    label: 'a missing key in an object row',
    row: (() => {
      const o = objectOf(goodRow(3))
      delete o.i
      return o
    })(),
    code: '42804',
    column: 'i',
    names: ['undefined'],
  },
  {
    label: 'undefined in an array row',
    row: rowWith(3, { tx: undefined }),
    code: '42804',
    column: 'tx',
    names: ['undefined'],
  },
  {
    label: 'too few array values',
    row: goodRow(3).slice(0, 8),
    code: '22023',
    column: undefined,
    names: ['8 values for 9 columns'],
  },
  {
    label: 'too many array values',
    row: [...goodRow(3), 'extra'],
    code: '22023',
    column: undefined,
    names: ['10 values for 9 columns'],
  },
  {
    label: 'VARCHAR(3) of 4 characters',
    row: rowWith(3, { vc: 'abcd' }),
    code: '22001',
    column: 'vc',
    names: ['"abcd"'],
  },
  {
    label: 'VARCHAR(3) of 4 characters, emoji',
    row: rowWith(3, { vc: '😀😀😀😀' }),
    code: '22001',
    column: 'vc',
    names: ['😀😀😀😀'],
  },
  {
    label: 'VARCHAR(3) longer by spaces (only CHAR drops them)',
    row: rowWith(3, { vc: 'ab    ' }),
    code: '22001',
    column: 'vc',
    names: ['"ab    "'],
  },
  {
    label: 'a Date not at midnight into DATE',
    row: rowWith(3, { dt: new Date(Date.UTC(2024, 0, 1, 12)) }),
    code: '42804',
    column: 'dt',
    names: ['2024-01-01T12:00:00.000Z'],
  },
  {
    label: 'a Date 1 ms before midnight, before 1970, into DATE',
    row: rowWith(3, { dt: new Date(-1) }),
    code: '42804',
    column: 'dt',
    names: ['1969-12-31T23:59:59.999Z'],
  },
  {
    // Taken by addRow, it failed the whole insert at execute().
    label: 'a Date before 4713 BC into DATE',
    row: rowWith(3, { dt: new Date(Date.UTC(-200000, 0, 1)) }),
    code: '22008',
    column: 'dt',
    names: ['-200000-01-01T00:00:00.000Z', 'range'],
  },
  { label: 'a number into TEXT', row: rowWith(3, { tx: 42 }), code: '42804', column: 'tx', names: ['42'] },
  { label: 'a REAL out of range', row: rowWith(3, { r: 1e39 }), code: '22003', column: 'r', names: ['1e+39'] },
  { label: 'a negative OID', row: rowWith(3, { o: -1 }), code: '22003', column: 'o', names: ['-1'] },
  { label: 'a Date into NUMERIC', row: rowWith(3, { n5: new Date(0) }), code: '42804', column: 'n5', names: [] },
  // NUMERIC(5,2) text is checked as it is added (it failed the whole insert at execute).
  numericRefusal('NUMERIC text that is no number', 'abc', '22P02', ['"abc"']),
  numericRefusal('NUMERIC text with two points', '12.3.4', '22P02', ['"12.3.4"']),
  numericRefusal('empty NUMERIC text', '', '22P02', ['""']),
  numericRefusal('NUMERIC text of a bare exponent', '1e', '22P02', ['"1e"']),
  // Only ASCII white space goes around the digits, as hyperd's cast takes it.
  numericRefusal('NUMERIC text after a byte order mark', '\ufeff1.5', '22P02', []),
  numericRefusal('NUMERIC text between no-break spaces', '\u00a02.5\u00a0', '22P02', []),
  numericRefusal('NUMERIC text past the precision', '1e16', '22003', ['"1e16"', 'before the point']),
  numericRefusal('NUMERIC 1000 into NUMERIC(5,2)', '1000', '22003', ['"1000"']),
  numericRefusal('a number past the precision into NUMERIC', 1e16, '22003', ['10000000000000000']),
  numericRefusal('NUMERIC text that needs rounding', '1.255', '22003', ['"1.255"', 'round']),
  numericRefusal('numeric() that needs rounding', numeric('0.001'), '22003', ['0.001']),
  numericRefusal('a number that needs rounding into NUMERIC', 1 / 3, '22003', ['0.333']),
  { label: 'a row that is not an array or object', row: 42, code: '42804', column: undefined, names: ['number'] },
]

describe('refused values', () => {
  for (const c of SYNC_REFUSALS) {
    test(`addRow refuses ${c.label}; cancel leaves the table unchanged`, async () => {
      const conn = await ctx.connect()
      const table = await freshTable(conn, R_SQL)
      await conn.executeCommand(
        `INSERT INTO ${table} VALUES (100, 1, 1, DATE '2000-01-01', 'a', 1, 'before', 1, 1), (101, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
      )
      const ins = await conn.inserter(table, { batchRows: 2 })
      for (let k = 0; k < 3; k++) ins.addRow(goodRow(k))
      const err = assertRefused(
        () => ins.addRow(c.row),
        { code: c.code, row: 3, column: c.column, names: c.names },
        c.label,
      )
      assert.ok(err instanceof HyperError)
      assert.equal(ins.rowCount, 3, 'the refused row is not added')
      await ins.cancel()
      assert.equal(await count(conn, table), 2)
      assert.deepStrictEqual(
        (await conn.queryAll(`SELECT id FROM ${table} ORDER BY id`)).map((r) => r.id),
        [100, 101],
      )
      await assertUsable(conn)
    })
  }

  test('a missing key named like an inherited property (constructor, toString) is missing, not the inherited function', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, '"constructor" INTEGER, "toString" TEXT, "__proto__" INTEGER')
    const ins = await conn.inserter(table)
    ins.addRow({ constructor: 1, toString: 'a', ['__proto__']: 2 })
    const e = assertRefused(
      () => ins.addRow({ toString: 'b', ['__proto__']: 3 }),
      { code: '42804', row: 1, column: 'constructor' },
      'constructor',
    )
    assert.match(e.message, /undefined: no value/)
    assertRefused(
      () => ins.addRow({ constructor: 4, ['__proto__']: 5 }),
      { code: '42804', row: 1, column: 'toString' },
      'toString',
    )
    const bare = Object.create(null)
    Object.assign(bare, { constructor: 6, toString: 'c', ['__proto__']: 7 })
    ins.addRow(bare)
    assert.equal(await ins.execute(), 2)
    assert.deepStrictEqual(await conn.queryAll(`SELECT "constructor" AS c, "toString" AS t FROM ${table} ORDER BY 1`), [
      { c: 1, t: 'a' },
      { c: 6, t: 'c' },
    ])
  })

  test('a refused HyperTime, HyperInterval or HyperTimestamp is named in the message', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, tm TIME, iv INTERVAL, ts TIMESTAMP')
    const ins = await conn.inserter(table)
    ins.addRow([0, null, null, null])
    const cases = [
      ['tm', new HyperTime(86_400_000_000n), '22008'],
      ['iv', new HyperInterval(0, 0, 2n ** 62n), '22003'],
      ['ts', new HyperTimestamp(2n ** 63n), '22003'],
      // Before 4713-01-01 BC: taken here, it failed the whole insert at execute().
      ['ts', new HyperTimestamp(-9_000_000_000_000_000_000n), '22008'],
      ['ts', new HyperTimestamp(-210_863_520_000_000_001n), '22008'],
    ]
    for (const [column, v, code] of cases) {
      const row = { id: 1, tm: null, iv: null, ts: null, [column]: v }
      const e = assertRefused(() => ins.addRow(row), { code, row: 1, column }, `${column} ${v}`)
      assert.ok(
        e.message.includes(String(v)) || (v.micros !== undefined && e.message.includes(String(v.micros))),
        `the message names the value ${v}: ${e.message}`,
      )
    }
    await ins.cancel()
    assert.equal(await count(conn, table), 0)
  })

  test("a Date outside hyperd's DATE range into a DATE column: 22008 naming row and column, nothing stored", async () => {
    // hyperd failed the whole COPY with XX001, naming nothing; then the
    // native layer failed it at execute(): addRow refuses it now.
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, d DATE')
    const far = new Date(Date.UTC(-5000, 0, 1))
    const rows = [
      [1, dateOnly('4713-01-01 BC')],
      [2, far],
    ]
    const viaRows = await rejectsHyper(() => conn.insertRows(table, rows), '22008')
    assert.deepStrictEqual([viaRows.row, viaRows.column], [1, 'd'])
    const ins = await conn.inserter(table)
    ins.addRow(rows[0])
    assertRefused(() => ins.addRow(rows[1]), { code: '22008', row: 1, column: 'd', names: ['-005000-01-01'] })
    // The first midnight before hyperd's least DATE, and its least.
    const least = Date.UTC(-4712, 0, 1)
    assertRefused(() => ins.addRow([2, new Date(least - 86_400_000)]), { code: '22008', row: 1, column: 'd' })
    ins.addRow([2, new Date(least)])
    assert.equal(await ins.execute(), 2, 'the refused rows are left out, the others stored')
    assert.deepStrictEqual(await conn.queryAll(`SELECT id, d::TEXT AS d FROM ${table} ORDER BY id`), [
      { id: 1, d: '4713-01-01 BC' },
      { id: 2, d: '4713-01-01 BC' },
    ])
    await conn.insertRows(table, [[3, dateOnly('294276-12-31')]])
    assert.equal(await conn.queryScalar(`SELECT d::TEXT FROM ${table} WHERE id = 3`), '294276-12-31')
    await assertUsable(conn)
  })

  test('a timestamp before 4713 BC is refused by addRow and insertRows (22008, row and column), the inserter goes on', async () => {
    // Taken by addRow, it failed the whole insert at execute() (22008 from
    // the native layer's check of the batch).
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, ts TIMESTAMP, tz TIMESTAMPTZ')
    const least = -210_863_520_000_000_000n // 4713-01-01 00:00:00 BC
    const early = [
      ['ts', new HyperTimestamp(-9_000_000_000_000_000_000n)],
      ['ts', new HyperTimestamp(least - 1n)],
      ['tz', new HyperTimestamp(least - 1n, true)],
      ['ts', new Date(Date.UTC(-200000, 0, 1))],
      ['tz', new Date(-8.64e15)],
    ]
    const ins = await conn.inserter(table)
    ins.addRow([0, new HyperTimestamp(least), new HyperTimestamp(least, true)])
    for (const [column, v] of early) {
      const row = { id: 1, ts: null, tz: null, [column]: v }
      assertRefused(() => ins.addRow(row), { code: '22008', row: 1, column, names: ['4713'] }, `${column} ${v}`)
    }
    ins.addRow([1, new Date(Date.UTC(-4712, 0, 1)), null])
    assert.equal(await ins.execute(), 2)
    assert.deepStrictEqual(await conn.queryAll(`SELECT id, ts::TEXT AS ts FROM ${table} ORDER BY id`), [
      { id: 0, ts: '4713-01-01 00:00:00 BC' },
      { id: 1, ts: '4713-01-01 00:00:00 BC' },
    ])
    const err = await rejectsHyper(
      () =>
        conn.insertRows(table, [
          [5, null, null],
          [6, new HyperTimestamp(least - 1n), null],
        ]),
      '22008',
    )
    assert.deepStrictEqual([err.row, err.column], [1, 'ts'])
    assert.equal(await count(conn, table), 2)
    // insertColumns' arrays go through the same checks.
    const viaColumns = await rejectsHyper(
      () => conn.insertColumns(table, { id: [7, 8], ts: [null, new HyperTimestamp(least - 1n)], tz: [null, null] }),
      '22008',
    )
    assert.deepStrictEqual([viaColumns.row, viaColumns.column], [1, 'ts'])
    assert.equal(await count(conn, table), 2)
    await assertUsable(conn)
  })

  test('after refused rows the inserter goes on and stores exactly the good rows', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    const ins = await conn.inserter(table, { batchRows: 3 })
    const stored = []
    let k = 0
    for (const c of SYNC_REFUSALS) {
      // A refused row has the row number the next good row then takes.
      assertRefused(() => ins.addRow(c.row), { code: c.code, row: k, column: c.column }, c.label)
      ins.addRow(goodRow(k))
      stored.push(k++)
    }
    // A refused row whose earlier columns were NULL (or set) must leave no
    // trace in the next row: NULLs before a refused TEXT value, then a row
    // with values; values before a refused value, then a row of NULLs.
    assertRefused(() => ins.addRow([k, null, null, null, null, null, 42, null, null]), {
      code: '42804',
      row: k,
      column: 'tx',
    })
    ins.addRow(goodRow(k))
    stored.push(k++)
    assertRefused(() => ins.addRow(rowWith(k, { o: -5 })), { code: '22003', row: k, column: 'o' })
    ins.addRow([k, null, null, null, null, null, null, null, null])
    const nullRow = k++
    assert.equal(ins.rowCount, k)
    assert.equal(await ins.execute(), k)
    const back = await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`)
    assert.deepStrictEqual(back, [
      ...stored.map(goodBack),
      { id: nullRow, i: null, g: null, dt: null, vc: null, n5: null, tx: null, r: null, o: null },
    ])
  })

  test('a lone surrogate in a full batch is refused when addRow hands the batch over', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    await conn.executeCommand(`INSERT INTO ${table} (id) VALUES (100)`)
    const ins = await conn.inserter(table, { batchRows: 2 })
    for (let k = 0; k < 3; k++) ins.addRow(goodRow(k))
    // Row 3 fills the second batch: the hand-over (a sync push) refuses it.
    assertRefused(() => ins.addRow(rowWith(3, { tx: 'a\uD800' })), {
      code: '42804',
      row: 3,
      column: 'tx',
      names: ['D800'],
    })
    assertRefused(() => ins.addRow(goodRow(4)), { code: '22023', row: undefined, column: undefined })
    await ins.cancel()
    assert.equal(await count(conn, table), 1)
    await assertUsable(conn)
  })

  // A value the native layer refuses while a batch is handed over ends the
  // insert (addRow and execute then refuse with 22023). Ended, it must not
  // hold the connection: `execute()` after it rejects, and later calls run.
  test('a batch refused at hand-over by addRow: execute() rejects and the connection is free', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    const ins = await conn.inserter(table, { batchRows: 2 })
    ins.addRow(goodRow(0))
    assertRefused(() => ins.addRow(rowWith(1, { tx: 'a\uD800' })), { code: '42804', row: 1, column: 'tx' })
    await rejectsHyper(() => ins.execute(), '22023')
    try {
      await withTimeout(assertUsable(conn), 3000, 'a query after the failed insert (without cancel)')
      assert.equal(await withTimeout(count(conn, table), 3000, 'count'), 0)
    } finally {
      await ins.cancel() // frees the connection for what follows
    }
  })

  test('a later batch refused at hand-over by addRowsFrom: execute() rejects and the connection is free', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    const ins = await conn.inserter(table, { batchRows: 2 })
    async function* rows() {
      for (let k = 0; k < 10; k++) yield k === 3 ? rowWith(3, { tx: 'a\uD800' }) : goodRow(k)
    }
    await rejectsRefusal(() => ins.addRowsFrom(rows()), { code: '42804', row: 3, column: 'tx', names: ['D800'] })
    await rejectsHyper(() => ins.execute(), '22023')
    try {
      await withTimeout(assertUsable(conn), 3000, 'a query after the failed insert (without cancel)')
      assert.equal(await withTimeout(count(conn, table), 3000, 'count'), 0)
    } finally {
      await ins.cancel()
    }
  })

  test('the first batch refused at hand-over by addRowsFrom ends the insert too (all or nothing)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    const ins = await conn.inserter(table, { batchRows: 2 })
    async function* rows() {
      for (let k = 0; k < 10; k++) yield k === 1 ? rowWith(1, { tx: 'a\uD800' }) : goodRow(k)
    }
    await rejectsRefusal(() => ins.addRowsFrom(rows()), { code: '42804', row: 1, column: 'tx', names: ['D800'] })
    // Row 0 (good) went down with the refused batch: the insert cannot go
    // on as if only the refused row was left out.
    let added = true
    try {
      ins.addRow(goodRow(100))
    } catch (e) {
      added = false
      assertHyperError(e, '22023')
    }
    const outcome = await ins.execute().then(
      (n) => `resolved with ${n}`,
      (e) => e,
    )
    await ins.cancel()
    const stored = await conn.queryAll(`SELECT id FROM ${table} ORDER BY id`)
    assert.deepStrictEqual(
      stored,
      [],
      `after the failed addRowsFrom, addRow ${added ? 'was accepted' : 'was refused'} and execute() ` +
        `${outcome instanceof Error ? `rejected (${outcome.code})` : outcome}: stored ${JSON.stringify(stored)}`,
    )
    assert.ok(outcome instanceof HyperError, `execute() after the insert failed: ${outcome}`)
    assert.equal(added, false, 'addRow after the insert failed is refused (22023)')
    await assertUsable(conn)
  })

  // A lone UTF-16 surrogate is the one value the native layer refuses only
  // when its batch goes (checking every string as it is added would cost
  // every insert): the insert fails then, storing nothing.
  test('a lone surrogate in TEXT is refused at execute (42804); the table is unchanged', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    await conn.executeCommand(`INSERT INTO ${table} (id) VALUES (100)`)
    for (const bad of ['\uD800', 'x\uDC00y', 'end \uD83D']) {
      const ins = await conn.inserter(table)
      ins.addRow(goodRow(0))
      ins.addRow(rowWith(1, { tx: bad }))
      await rejectsRefusal(
        () => ins.execute(),
        { code: '42804', row: 1, column: 'tx', names: ['surrogate'] },
        JSON.stringify(bad),
      )
      assertRefused(() => ins.addRow(goodRow(2)), { code: '22023', row: undefined, column: undefined })
      assert.equal(await count(conn, table), 1)
      await assertUsable(conn)
    }
  })

  test('insertRows: a bad row after more than one batch was sent stores nothing', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, v INTEGER')
    const BAD_AT = DEFAULT_BATCH_ROWS + 5000
    let closed = false
    async function* rows() {
      try {
        for (let k = 0; k < BAD_AT + 1000; k++) yield [k, k === BAD_AT ? 'bad' : k]
      } finally {
        closed = true
      }
    }
    await rejectsRefusal(() => conn.insertRows(table, rows()), {
      code: '42804',
      row: BAD_AT,
      column: 'v',
      names: ['"bad"'],
    })
    assert.ok(closed, 'the source was closed')
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
    // The table takes rows afterwards.
    assert.equal(await conn.insertRows(table, [[1, 1]]), 1)
    assert.equal(await count(conn, table), 1)
  })

  test('insertRows: a value refused by the native layer in the first batch stores nothing', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    function* rows() {
      for (let k = 0; k < 3 * DEFAULT_BATCH_ROWS; k++) yield [k, k === 100 ? 'a\uD800' : 'ok']
    }
    await rejectsRefusal(() => conn.insertRows(table, rows()), {
      code: '42804',
      row: 100,
      column: 's',
      names: ['D800'],
    })
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
  })

  test('insertRows: a source that throws after more than one batch stores nothing', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, v INTEGER')
    const boom = new Error('the source failed')
    async function* rows() {
      for (let k = 0; k < DEFAULT_BATCH_ROWS + 5000; k++) yield { id: k, v: -k }
      throw boom
    }
    await assert.rejects(
      () => conn.insertRows(table, rows()),
      (e) => e === boom,
    )
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
    assert.equal(await conn.insertRows(table, [{ id: 1, v: 2 }]), 1)
    assert.deepStrictEqual(await conn.queryAll(`SELECT * FROM ${table}`), [{ id: 1, v: 2 }])
  })

  test('insertColumns: missing column, extra key, unequal lengths, bad nulls (22023)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, v DOUBLE PRECISION')
    await conn.executeCommand(`INSERT INTO ${table} VALUES (100, 1.5)`)
    const cases = [
      ['a missing column', { id: [1] }, undefined, '`v`'],
      ['an extra key', { id: [1], v: [1], w: [1] }, undefined, '`w`'],
      ['unequal lengths', { id: [1, 2], v: [1] }, undefined, '`v`'],
      ['unequal TypedArray lengths', { id: Int32Array.of(1, 2), v: Float64Array.of(1, 2, 3) }, undefined, '`v`'],
      ['nulls of another length', { id: [1, 2], v: [1, 2] }, { v: Uint8Array.of(0) }, '`v`'],
      ['nulls of an unknown column', { id: [1, 2], v: [1, 2] }, { w: Uint8Array.of(0, 0) }, '`w`'],
      ['nulls that are not booleans', { id: [1, 2], v: [1, 2] }, { v: [false, 2] }, '`v`'],
      ['nulls with a hole', { id: [1, 2], v: [1, 2] }, { v: [false, ,] }, '`v`'],
      ['not an array', { id: [1], v: 1 }, undefined, '`v`'],
    ]
    for (const [label, columns, nulls, name] of cases) {
      await rejectsRefusal(
        () => conn.insertColumns(table, columns, { nulls }),
        { code: '22023', row: undefined, column: undefined, names: [name] },
        label,
      )
    }
    assert.equal(await count(conn, table), 1)
    await assertUsable(conn)
  })

  test('insertColumns: NULL through nulls into a NOT NULL column (23502, with its row)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, v DOUBLE PRECISION')
    await conn.executeCommand(`INSERT INTO ${table} VALUES (100, 1.5)`)
    const n = DEFAULT_BATCH_ROWS + 10_000
    const at = DEFAULT_BATCH_ROWS + 4321 // in the second batch
    const id = Int32Array.from({ length: n }, (_, k) => k)
    const v = Float64Array.from({ length: n }, (_, k) => k / 2)
    const nulls = Uint8Array.from({ length: n }, (_, k) => (k === at ? 1 : 0))
    await rejectsRefusal(() => conn.insertColumns(table, { id, v }, { nulls: { id: nulls } }), {
      code: '23502',
      row: at,
      column: 'id',
    })
    // Plain arrays, nulls as booleans; and null among the values.
    await rejectsRefusal(
      () => conn.insertColumns(table, { id: [1, 2, 3], v: [1, 2, 3] }, { nulls: { id: [false, false, true] } }),
      { code: '23502', row: 2, column: 'id' },
    )
    await rejectsRefusal(() => conn.insertColumns(table, { id: [1, null], v: [1, 2] }), {
      code: '23502',
      row: 1,
      column: 'id',
      names: ['null'],
    })
    assert.equal(await count(conn, table), 1)
    await assertUsable(conn)
  })
})

test('NUMERIC values that fit their column are taken as written, whatever their form', async () => {
  const conn = await ctx.connect()
  const table = await freshTable(conn, 'id INTEGER NOT NULL, n NUMERIC(5,2)')
  const cases = [
    ['999.99', '999.99'],
    ['-999.99', '-999.99'],
    ['-0.01', '-0.01'],
    ['1.2e2', '120.00'],
    ['12500e-2', '125.00'],
    ['0.000e5', '0.00'],
    ['00001.500', '1.50'],
    ['  5 ', '5.00'],
    ['+.5', '0.50'],
    ['7.', '7.00'],
    [numeric('1.10'), '1.10'],
    [123n, '123.00'],
    [0.25, '0.25'],
    [1e-2, '0.01'],
  ]
  const ins = await conn.inserter(table)
  cases.forEach(([v], id) => ins.addRow([id, v]))
  assert.equal(await ins.execute(), cases.length)
  const back = await conn.queryAll(`SELECT id, n::TEXT AS n FROM ${table} ORDER BY id`)
  assert.deepStrictEqual(
    back.map((r) => r.n),
    cases.map(([, want]) => want),
  )
})

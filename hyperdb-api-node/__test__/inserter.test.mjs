// Inserter, insertRows and insertColumns: every type goes in and reads back
// exactly by each path, including values at the edges of what JS hands
// over. Refused values are in inserter-refusals.test.mjs; an inserter left
// unexecuted, a definition unlike the server's, and the connection's queue
// in inserter-lifecycle.test.mjs.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper, sleep } from './helpers.mjs'
import { freshTable, count, assertUsable, sameValue, rejectsRefusal, utc } from './inserter-helpers.mjs'
import {
  Inserter,
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
// Every type

const ts = (micros) => new HyperTimestamp(micros, false)
const tsz = (micros) => new HyperTimestamp(micros, true)
const MICROS_0001 = -62135596800000000n // 0001-01-01 00:00:00 UTC
const MICROS_9999_END = 253402300799999999n // 9999-12-31 23:59:59.999999 UTC
const LONG_TEXT = 'grüße 😀 𝄞 '.repeat(30_000) // 330k UTF-16 units, 4-byte characters in it
const pooled = Buffer.from('pooled') // a slice of Node's shared pool: byteOffset != 0
const view = new Uint8Array([1, 2, 3, 4, 5, 6]).subarray(2, 5) // a view into a larger buffer

/**
 * Each column: its SQL type and cases of [value written, value read back].
 * Row k holds case k % cases.length of every column; a last row is NULL in
 * every nullable column.
 */
const COLUMNS = [
  {
    name: 'b',
    type: 'BOOLEAN',
    cases: [
      [true, true],
      [false, false],
    ],
  },
  {
    name: 's',
    type: 'SMALLINT',
    cases: [
      [-32768, -32768],
      [32767, 32767],
      [0, 0],
      [-1, -1],
      [5n, 5],
    ],
  },
  {
    name: 'i',
    type: 'INTEGER',
    cases: [
      [-2147483648, -2147483648],
      [2147483647, 2147483647],
      [0, 0],
      [-1, -1],
      [-2147483648n, -2147483648],
    ],
  },
  {
    name: 'g',
    type: 'BIGINT',
    cases: [
      [-(2n ** 63n), -9223372036854775808n],
      [2n ** 63n - 1n, 9223372036854775807n],
      [-1, -1n],
      [-(2 ** 53) + 1, -9007199254740991n],
      [2 ** 53 - 1, 9007199254740991n],
      [2 ** 32, 4294967296n],
      [-(2 ** 32) - 1, -4294967297n],
      [2 ** 32 - 1, 4294967295n],
      [-(2 ** 32), -4294967296n],
      [-(2 ** 32) + 1, -4294967295n],
      [-(2 ** 31), -2147483648n],
      [2 ** 31, 2147483648n],
      [0, 0n],
      [-0, 0n],
      [-123456789012345, -123456789012345n],
    ],
  },
  {
    name: 'r',
    type: 'REAL',
    cases: [
      [1.5, 1.5],
      [-0, -0],
      [NaN, NaN],
      [Infinity, Infinity],
      [-Infinity, -Infinity],
      [0.1, Math.fround(0.1)],
      [3.4028234663852886e38, 3.4028234663852886e38], // FLT_MAX
      [1.401298464324817e-45, 1.401298464324817e-45], // the smallest subnormal
    ],
  },
  {
    name: 'd',
    type: 'DOUBLE PRECISION',
    cases: [
      [NaN, NaN],
      [-0, -0],
      [Infinity, Infinity],
      [-Infinity, -Infinity],
      [0.1, 0.1],
      [Number.MAX_VALUE, Number.MAX_VALUE],
      [Number.MIN_VALUE, Number.MIN_VALUE],
      [-1 / 3, -1 / 3],
    ],
  },
  {
    name: 'o',
    type: 'OID',
    cases: [
      [0, 0],
      [4294967295, 4294967295],
      [2147483648, 2147483648],
      [7n, 7],
    ],
  },
  {
    name: 'n',
    type: 'NUMERIC(38,10)',
    cases: [
      ['1234567890123456789012345678.0123456789', '1234567890123456789012345678.0123456789'],
      ['-9999999999999999999999999999.9999999999', '-9999999999999999999999999999.9999999999'],
      [numeric('-0.0000000001'), '-0.0000000001'],
      [numeric('12.30'), '12.3000000000'],
      [123n, '123.0000000000'],
      [-(2n ** 63n), '-9223372036854775808.0000000000'],
      [1.5, '1.5000000000'],
      [-2.25, '-2.2500000000'],
      [0.1, '0.1000000000'],
      ['0', '0.0000000000'],
      ['+1', '1.0000000000'],
      ['.5', '0.5000000000'],
      ['5.', '5.0000000000'],
    ],
  },
  {
    name: 'n5',
    type: 'NUMERIC(5,2)',
    cases: [
      ['-999.99', '-999.99'],
      ['999.99', '999.99'],
      [1.5, '1.50'],
      [numeric('0.01'), '0.01'],
      [7n, '7.00'],
      ['1.20', '1.20'],
      ['-0.5', '-0.50'],
    ],
  },
  {
    name: 'tx',
    type: 'TEXT',
    cases: [
      ['', ''],
      ['héllo wörld ✓', 'héllo wörld ✓'],
      ['family 👨‍👩‍👧 flags 🇫🇷 𝄞', 'family 👨‍👩‍👧 flags 🇫🇷 𝄞'],
      ['日本語テキスト', '日本語テキスト'],
      ['it\'s a "quote"\nnew line\ttab', 'it\'s a "quote"\nnew line\ttab'],
      [LONG_TEXT, LONG_TEXT],
    ],
  },
  {
    name: 'vc',
    type: 'VARCHAR(5)',
    cases: [
      ['😀abcd', '😀abcd'], // 5 characters, 6 UTF-16 units, 8 bytes
      ['', ''],
      ['ab😀😀c', 'ab😀😀c'],
      ['😀😀😀😀😀', '😀😀😀😀😀'],
    ],
  },
  {
    name: 'ch',
    type: 'CHAR(3)',
    cases: [
      ['ab', 'ab '], // blank-padded
      ['abc', 'abc'],
      ['😀', '😀  '],
      ['', '   '],
      ['é😀x', 'é😀x'],
    ],
  },
  {
    name: 'j',
    type: 'JSON',
    cases: [
      ['{"a": [1, 2, {"b": "ü😀"}], "c": null}', '{"a": [1, 2, {"b": "ü😀"}], "c": null}'],
      ['[]', '[]'],
      ['"str"', '"str"'],
      ['42', '42'],
    ],
  },
  {
    name: 'bytes',
    type: 'BYTEA',
    cases: [
      [Buffer.from([0x00, 0xff, 0x7f, 0x80, 0x00]), Buffer.from([0x00, 0xff, 0x7f, 0x80, 0x00])],
      [new Uint8Array([9, 8, 7]), Buffer.from([9, 8, 7])],
      [new Uint8Array(0), Buffer.alloc(0)], // empty, not NULL
      [Buffer.alloc(0), Buffer.alloc(0)],
      [pooled, Buffer.from('pooled')],
      [view, Buffer.from([3, 4, 5])],
    ],
  },
  {
    name: 'dt',
    type: 'DATE',
    cases: [
      [new Date(Date.UTC(2024, 1, 29)), utc('2024-02-29')],
      [dateOnly('2024-02-29'), utc('2024-02-29')],
      [dateOnly('1900-03-01'), utc('1900-03-01')],
      [new Date(Date.UTC(1969, 11, 31)), utc('1969-12-31')],
      [new Date(0), utc('1970-01-01')],
      [dateOnly('0001-01-01'), utc('0001-01-01')],
      [dateOnly('9999-12-31'), utc('9999-12-31')],
      [new Date(Date.UTC(1600, 0, 1)), utc('1600-01-01')],
    ],
  },
  {
    name: 'tm',
    type: 'TIME',
    cases: [
      [new HyperTime(0n), new HyperTime(0n)],
      [new HyperTime(1n), new HyperTime(1n)],
      [new HyperTime(45296789012n), new HyperTime(45296789012n)], // 12:34:56.789012
      [new HyperTime(86399999999n), new HyperTime(86399999999n)], // 23:59:59.999999
    ],
  },
  {
    name: 'ts',
    type: 'TIMESTAMP',
    cases: [
      [ts(1709210096123456n), ts(1709210096123456n)],
      [ts(-1n), ts(-1n)],
      [ts(-1234567890123457n), ts(-1234567890123457n)], // 1930, odd microseconds
      [ts(MICROS_0001), ts(MICROS_0001)],
      [ts(MICROS_9999_END), ts(MICROS_9999_END)],
      [new Date(Date.UTC(2024, 1, 29, 12, 34, 56, 789)), ts(1709210096789000n)],
      [new Date(-1), ts(-1000n)],
      [new Date(Date.UTC(1969, 6, 20, 20, 17, 40, 5)), ts(-14182939995000n)],
    ],
  },
  {
    name: 'tz',
    type: 'TIMESTAMPTZ',
    cases: [
      [tsz(1717236000000001n), tsz(1717236000000001n)],
      [tsz(-1n), tsz(-1n)],
      [tsz(MICROS_0001), tsz(MICROS_0001)],
      [new Date(Date.UTC(2024, 1, 29, 12, 34, 56, 789)), tsz(1709210096789000n)],
      [new Date(-86_400_001), tsz(-86_400_001_000n)],
    ],
  },
  {
    name: 'iv',
    type: 'INTERVAL',
    cases: [
      [new HyperInterval(-1, -2, -3n), new HyperInterval(-1, -2, -3n)],
      [new HyperInterval(14, 3, 14706789012n), new HyperInterval(14, 3, 14706789012n)],
      [new HyperInterval(0, 0, 0n), new HyperInterval(0, 0, 0n)],
      [new HyperInterval(1, -1, 86400000000n), new HyperInterval(1, -1, 86400000000n)],
      [
        new HyperInterval(-2147483648, 2147483647, -9223372036854775n),
        new HyperInterval(-2147483648, 2147483647, -9223372036854775n),
      ],
    ],
  },
]

const ALL_SQL = ['id INTEGER NOT NULL', ...COLUMNS.map((c) => `${c.name} ${c.type}`)].join(', ')
const CASE_ROWS = Math.max(...COLUMNS.map((c) => c.cases.length))
/** Rows as [written values by column name, expected values by column name]. */
const ALL_ROWS = [
  ...Array.from({ length: CASE_ROWS }, (_, k) => [
    { id: k, ...Object.fromEntries(COLUMNS.map((c) => [c.name, c.cases[k % c.cases.length][0]])) },
    { id: k, ...Object.fromEntries(COLUMNS.map((c) => [c.name, c.cases[k % c.cases.length][1]])) },
  ]),
  [
    { id: CASE_ROWS, ...Object.fromEntries(COLUMNS.map((c) => [c.name, null])) },
    { id: CASE_ROWS, ...Object.fromEntries(COLUMNS.map((c) => [c.name, null])) },
  ],
]
const NAMES = ['id', ...COLUMNS.map((c) => c.name)]
const asArray = (row) => NAMES.map((n) => row[n])

async function checkAllTypes(conn, table, label) {
  const back = await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`)
  assert.equal(back.length, ALL_ROWS.length, `${label}: row count`)
  back.forEach((got, k) => {
    assert.deepStrictEqual(Object.keys(got), NAMES)
    const want = ALL_ROWS[k][1]
    for (const name of NAMES) sameValue(got[name], want[name], `${label}: row ${k} column ${name}`)
  })
}

describe('every type reads back exactly', () => {
  test('Inserter.addRow with arrays (one batch)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, ALL_SQL)
    const ins = await conn.inserter(table)
    assert.deepStrictEqual(
      ins.columns.map((c) => c.name),
      NAMES,
    )
    for (const [row] of ALL_ROWS) ins.addRow(asArray(row))
    assert.equal(ins.rowCount, ALL_ROWS.length)
    assert.equal(await ins.execute(), ALL_ROWS.length)
    // The columns in the shape the catalog gives them (`type`, not the native `sqlType`).
    assert.deepStrictEqual(ins.columns, (await conn.catalog.getTableDefinition(table)).columns)
    await checkAllTypes(conn, table, 'addRow arrays')
  })

  test('Inserter.addRow with objects, 4 rows a batch', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, ALL_SQL)
    const ins = await conn.inserter(table, { batchRows: 4 })
    // Keys in reverse order: they are looked up by name.
    for (const [row] of ALL_ROWS) ins.addRow(Object.fromEntries(Object.entries(row).reverse()))
    assert.equal(await ins.execute(), ALL_ROWS.length)
    await checkAllTypes(conn, table, 'addRow objects')
  })

  test("Inserter.addRow across the builders' growth (5,000 rows of every type; batches of 64K and 3,000)", async () => {
    // The builders start at 1,024 rows and grow fourfold up to the batch:
    // every case (but the very long ones) and NULL lands on both sides of
    // each growth.
    const ROWS = 5000
    const small = ([v]) => !((typeof v === 'string' || v instanceof Uint8Array) && v.length > 100)
    const cases = COLUMNS.map((c) => c.cases.filter(small))
    const row = (k, side) => ({
      id: k,
      ...Object.fromEntries(
        COLUMNS.map((c, j) => [c.name, k % 13 === 12 ? null : cases[j][k % cases[j].length][side]]),
      ),
    })
    for (const batchRows of [undefined, 3000]) {
      const conn = await ctx.connect()
      const table = await freshTable(conn, ALL_SQL)
      const ins = await conn.inserter(table, { batchRows })
      for (let k = 0; k < ROWS; k++) ins.addRow(asArray(row(k, 0)))
      assert.equal(await ins.execute(), ROWS)
      const back = await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`)
      assert.equal(back.length, ROWS)
      back.forEach((got, k) => {
        const want = row(k, 1)
        for (const name of NAMES) sameValue(got[name], want[name], `batchRows ${batchRows}: row ${k} column ${name}`)
      })
    }
  })

  test('conn.insertRows from an async generator (arrays and objects mixed, 3 rows a batch)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, ALL_SQL)
    async function* rows() {
      for (const [k, [row]] of ALL_ROWS.entries()) {
        await sleep(0)
        yield k % 2 === 0 ? asArray(row) : row
      }
    }
    assert.equal(await conn.insertRows(table, rows(), { batchRows: 3 }), ALL_ROWS.length)
    await checkAllTypes(conn, table, 'insertRows')
  })

  test('conn.insertColumns with plain arrays, NULL as null and through nulls', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, ALL_SQL)
    const columns = Object.fromEntries(NAMES.map((n) => [n, ALL_ROWS.map(([row]) => row[n])]))
    assert.equal(await conn.insertColumns(table, columns, { batchRows: 5 }), ALL_ROWS.length)
    await checkAllTypes(conn, table, 'insertColumns null')

    // The same rows with the NULL row marked by `nulls` and a value there
    // that would be refused: a NULL row's value is not looked at.
    const table2 = await freshTable(conn, ALL_SQL)
    const last = ALL_ROWS.length - 1
    const columns2 = Object.fromEntries(
      NAMES.map((n) => [n, ALL_ROWS.map(([row], k) => (k === last && n !== 'id' ? 'not a value' : row[n]))]),
    )
    const nulls = Object.fromEntries(
      COLUMNS.map((c, j) => [
        c.name,
        j % 2 === 0 ? Uint8Array.from(ALL_ROWS, (_, k) => (k === last ? 1 : 0)) : ALL_ROWS.map((_, k) => k === last),
      ]),
    )
    assert.equal(await conn.insertColumns(table2, columns2, { nulls }), ALL_ROWS.length)
    await checkAllTypes(conn, table2, 'insertColumns nulls')
  })

  test('conn.insertColumns with TypedArrays of each column type and nulls, across batches', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(
      conn,
      'id INTEGER NOT NULL, s SMALLINT, i INTEGER, g BIGINT, r REAL, d DOUBLE PRECISION, b BOOLEAN, o OID, ' +
        'ts TIMESTAMP, tz TIMESTAMPTZ, tm TIME',
    )
    const n = 2 * DEFAULT_BATCH_ROWS + 1234
    // id is a view at a byte offset into a larger buffer.
    const id = new Int32Array(n + 3).subarray(3)
    const s = new Int16Array(n)
    const i32 = new Int32Array(n)
    const g = new BigInt64Array(n)
    const r = new Float32Array(n)
    const d = new Float64Array(n)
    const b = new Uint8Array(n)
    const o = new Uint32Array(n)
    const tsv = new BigInt64Array(n)
    const tzv = new BigInt64Array(n)
    const tm = new BigInt64Array(n)
    for (let k = 0; k < n; k++) {
      id[k] = k
      s[k] = (k % 65536) - 32768
      i32[k] = Math.imul(k, 2654435761)
      g[k] = BigInt(k) * 1_000_000_007_000n - 2n ** 62n
      r[k] = k * 0.25 - 1000.5
      d[k] = k % 1000 === 0 ? NaN : -k / 3
      b[k] = k % 3 === 0 ? 1 : 0
      o[k] = Math.imul(k, 2654435761) >>> 0
      tsv[k] = BigInt(k) * 1_000_003_007n - 10n ** 15n // before and after 1970
      tzv[k] = -BigInt(k) * 7n
      tm[k] = BigInt(k) * 400_000n + 1n
    }
    const nullEvery = (m) => Uint8Array.from({ length: n }, (_, k) => (k % m === 0 ? 1 : 0))
    const nulls = {
      s: nullEvery(5),
      g: nullEvery(7),
      r: Array.from({ length: n }, (_, k) => k % 11 === 0),
      b: nullEvery(13),
      ts: nullEvery(17),
      tm: nullEvery(n), // only row 0
    }
    const stored = await conn.insertColumns(table, { id, s, i: i32, g, r, d, b, o, ts: tsv, tz: tzv, tm }, { nulls })
    assert.equal(stored, n)
    const isNull = (col, k) => (nulls[col] === undefined ? false : Boolean(nulls[col][k]))
    const expect = (col, k, v) => (isNull(col, k) ? null : v)
    const back = await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`)
    assert.equal(back.length, n)
    const wrong = []
    back.forEach((row, k) => {
      const want = {
        id: k,
        s: expect('s', k, s[k]),
        i: i32[k],
        g: expect('g', k, g[k]),
        r: expect('r', k, r[k]),
        d: d[k],
        b: expect('b', k, b[k] === 1),
        o: o[k],
        ts: expect('ts', k, ts(tsv[k])),
        tz: tsz(tzv[k]),
        tm: expect('tm', k, new HyperTime(tm[k])),
      }
      try {
        assert.deepStrictEqual(row, want)
      } catch {
        if (wrong.length < 5) wrong.push({ k, row, want })
      }
    })
    assert.deepStrictEqual(wrong, [], 'rows read back differ')
  })

  test('a TypedArray of another element type goes value by value', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, g BIGINT, d DOUBLE PRECISION, s SMALLINT')
    assert.equal(
      await conn.insertColumns(table, {
        id: Float64Array.of(0, 1, 2),
        g: Int32Array.of(-1, 2147483647, -2147483648),
        d: Int32Array.of(-5, 0, 7),
        s: Float32Array.of(-32768, 1, 32767),
      }),
      3,
    )
    assert.deepStrictEqual(await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`), [
      { id: 0, g: -1n, d: -5, s: -32768 },
      { id: 1, g: 2147483647n, d: 0, s: 1 },
      { id: 2, g: -2147483648n, d: 7, s: 32767 },
    ])
    // ... and is checked like addRow.
    await rejectsRefusal(
      () => conn.insertColumns(table, { id: Float64Array.of(0, 1.5), g: [1, 2], d: [1, 2], s: [1, 2] }),
      { code: '42804', row: 1, column: 'id', names: ['1.5'] },
      'Float64Array 1.5 into INTEGER',
    )
    assert.equal(await count(conn, table), 3)
  })

  test('a DATE column takes back the Float64Array of milliseconds queryColumns reads it as', async () => {
    const conn = await ctx.connect()
    const source = await freshTable(conn, 'id INTEGER NOT NULL, d DATE')
    await conn.executeCommand(
      `INSERT INTO ${source} VALUES (0, DATE '1970-01-01'), (1, DATE '1970-01-01' - 2440550), ` +
        `(2, DATE '9999-12-31'), (3, NULL), (4, DATE '2024-02-29'), (5, DATE '0001-01-01')`,
    )
    const chunks = []
    for await (const chunk of conn.queryColumns(`SELECT id, d FROM ${source} ORDER BY id`)) chunks.push(chunk)
    const copy = await freshTable(conn, 'id INTEGER NOT NULL, d DATE')
    for (const chunk of chunks) {
      const [id, d] = chunk.columns
      assert.ok(d.values instanceof Float64Array)
      // NULLs cross per row, not as queryColumns' bitmap.
      const nulls = Uint8Array.from({ length: chunk.numRows }, (_, i) => (d.get(i) === null ? 1 : 0))
      assert.equal(
        await conn.insertColumns(copy, { id: id.values, d: d.values }, { nulls: { d: nulls } }),
        chunk.numRows,
      )
    }
    const text = (t) => conn.queryAll(`SELECT id, d::TEXT AS d FROM ${t} ORDER BY id`)
    assert.deepStrictEqual(await text(copy), await text(source))
    // ... each value checked as a Date is, row and column named; nothing stored.
    const refused = [
      [Float64Array.of(0, 86_400_000 + 1), '42804', 'a DATE takes a Date at midnight UTC'],
      [Float64Array.of(0, Number.NaN), '42804', 'a DATE takes a Date at midnight UTC'],
      [Float64Array.of(0, -2_440_551 * 86_400_000), '22008', "outside hyperd's DATE range"],
      [Float64Array.of(0, 106_762_940 * 86_400_000), '22008', "outside hyperd's DATE range"],
    ]
    for (const [d, code, why] of refused) {
      const e = await rejectsRefusal(() => conn.insertColumns(copy, { id: Int32Array.of(7, 8), d }), {
        code,
        row: 1,
        column: 'd',
      })
      assert.match(e.message, new RegExp(why))
    }
    assert.equal(await count(conn, copy), 6)
  })

  test('empty inserts store nothing and return 0', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, s TEXT')
    const ins = await conn.inserter(table)
    assert.equal(await ins.execute(), 0)
    assert.equal(await conn.insertRows(table, []), 0)
    assert.equal(await conn.insertColumns(table, { id: new Int32Array(0), s: [] }), 0)
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
  })
})

// Values the library documents as accepted, at the edges of what JS hands over.
describe('edge values', () => {
  test('TIME 24:00:00 is refused with its row (hyperd reads Arrow times below 24:00:00 only)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, tm TIME')
    const ins = await conn.inserter(table)
    ins.addRow([0, new HyperTime(86_399_999_999n)])
    assert.throws(
      () => ins.addRow([1, new HyperTime(86_400_000_000n)]),
      (e) => e instanceof HyperError && e.code === '22008' && e.row === 1 && e.column === 'tm',
    )
    assert.equal(await ins.execute(), 1)
    // The TypedArray path is checked in the native layer, with the row.
    const err = await conn
      .insertColumns(table, { id: new Int32Array([5, 6]), tm: new BigInt64Array([0n, 86_400_000_000n]) })
      .then(
        () => null,
        (e) => e,
      )
    assert.ok(err instanceof HyperError && err.code === '22008' && err.row === 1 && err.column === 'tm', String(err))
    assert.deepStrictEqual(await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`), [
      { id: 0, tm: new HyperTime(86_399_999_999n) },
    ])
  })

  test('a valid Date more than ~285 years from 1970 goes into TIMESTAMP and TIMESTAMPTZ', async () => {
    // A Date holds up to ±8.64e15 ms, ±8.64e18 µs: every Date fits a TIMESTAMP.
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, ts TIMESTAMP, tz TIMESTAMPTZ')
    const dates = [
      new Date(Date.UTC(1600, 0, 1, 12, 0, 0, 1)),
      new Date(Date.UTC(2300, 5, 15)),
      new Date('0001-01-01T00:00:00.000Z'),
    ]
    const ins = await conn.inserter(table)
    dates.forEach((date, k) => ins.addRow([k, date, date]))
    assert.equal(await ins.execute(), dates.length)
    assert.deepStrictEqual(
      await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`),
      dates.map((date, k) => ({
        id: k,
        ts: ts(BigInt(date.getTime()) * 1000n),
        tz: tsz(BigInt(date.getTime()) * 1000n),
      })),
    )
  })

  test('dateOnly goes in as parameters take it: ISO and BC years, years past a JS Date', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, dt DATE')
    const given = ['-4712-01-01', '4713-01-02 BC', '2024-2-9', '275760-09-14', '294276-12-31']
    await conn.insertRows(
      table,
      given.map((d, k) => [k, dateOnly(d)]),
    )
    const stored = await conn.queryAll(`SELECT dt::TEXT AS t FROM ${table} ORDER BY id`)
    assert.deepStrictEqual(
      stored.map((r) => r.t),
      ['4713-01-01 BC', '4713-01-02 BC', '2024-02-09', '275760-09-14', '294276-12-31'],
    )
    for (const [k, d] of given.entries()) {
      const viaParam = await conn.queryScalar('SELECT $1::TEXT', [dateOnly(d)])
      assert.equal(viaParam, stored[k].t, d)
    }
  })

  test('CHAR(n) drops spaces past n (as Tableau stores them); VARCHAR(n) keeps them', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, c CHAR(3), v VARCHAR(3)')
    const ins = await conn.inserter(table)
    ins.addRow([0, 'abc   ', 'ab '])
    ins.addRow([1, '日本語 ', 'a'])
    assert.equal(await ins.execute(), 2)
    await conn.insertColumns(table, { id: [2], c: ['a     '], v: ['   '] })
    await rejectsRefusal(() => conn.insertColumns(table, { id: [3], c: ['abc  x'], v: ['a'] }), {
      code: '22001',
      row: 0,
      column: 'c',
      names: ['"abc  x"', 'longer than 3 characters'],
    })
    const rows = await conn.queryAll(
      `SELECT id, octet_length(c) AS n, c || '|' AS c, v || '|' AS v FROM ${table} ORDER BY id`,
    )
    assert.deepStrictEqual(rows, [
      { id: 0, n: 3, c: 'abc|', v: 'ab |' },
      { id: 1, n: 9, c: '日本語|', v: 'a|' },
      { id: 2, n: 1, c: 'a|', v: '   |' },
    ])
  })

  test('long text: a batch goes value by value while ASCII, and whole as UTF-16 from its first other value', async () => {
    // Values of 64 units or more on average are written one by one; a
    // value that is not ASCII (anywhere; one near the batch's end, whose
    // extra UTF-8 byte would push the last 'z' past the text's units)
    // sends the batch the other way, a lone surrogate to its refusal.
    const long = (k, tail = '') => `${String(k).padStart(6, '0')} ${'x'.repeat(200)}${tail}`
    const batches = [
      [long(0), long(1), null, long(3)],
      [long(0), long(1, 'é'), long(2)],
      [long(0), long(1), long(2, 'éz')],
      [long(0), long(1, '😀'), long(2, '日本')],
      [long(0, '\u00ff'), long(1)],
    ]
    for (const values of batches) {
      const conn = await ctx.connect()
      const table = await freshTable(conn, 'id INTEGER NOT NULL, tx TEXT')
      const rows = values.map((v, k) => [k, v])
      assert.equal(await conn.insertRows(table, rows), rows.length)
      const ins = await conn.inserter(table)
      for (const row of rows) ins.addRow([row[0] + 100, row[1]])
      assert.equal(await ins.execute(), rows.length)
      const back = await conn.queryAll(`SELECT id, tx FROM ${table} ORDER BY id`, [], { rowMode: 'array' })
      assert.deepStrictEqual(back, [...rows, ...rows.map(([k, v]) => [k + 100, v])])
    }
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, tx TEXT')
    await rejectsRefusal(
      () =>
        conn.insertRows(table, [
          [0, long(0)],
          [1, long(1, '\uD800')],
        ]),
      {
        code: '42804',
        row: 1,
        column: 'tx',
        names: ['surrogate'],
      },
    )
    assert.equal(await count(conn, table), 0)
    await assertUsable(conn)
  })

  test('NUMERIC from a finite number whose String() has an exponent (1e-7, 1e21)', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, n NUMERIC(38,10)')
    const ins = await conn.inserter(table)
    ins.addRow([0, 1e-7])
    ins.addRow([1, -2.5e-8])
    ins.addRow([2, 1e21])
    assert.equal(await ins.execute(), 3)
    assert.deepStrictEqual(await conn.queryAll(`SELECT * FROM ${table} ORDER BY id`), [
      { id: 0, n: '0.0000001000' },
      { id: 1, n: '-0.0000000250' },
      { id: 2, n: '1000000000000000000000.0000000000' },
    ])
  })
})

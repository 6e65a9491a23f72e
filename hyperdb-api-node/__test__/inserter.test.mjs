// Inserter, insertRows and insertColumns: every type goes in and reads back
// exactly by each path; a refused value names its row, column and value,
// stores nothing and leaves the inserter (before execute) and the
// connection usable; a dropped inserter commits nothing; a table
// definition that does not match the server's is refused; calls made
// while an inserter is open wait for it.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper, rejectsHyper, assertHyperError, sleep, withTimeout } from './helpers.mjs'
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

let tableCount = 0

/** A new table `(columns)` on `conn`; returns its name. */
async function freshTable(conn, columns, name = `t${tableCount++}`) {
  await conn.executeCommand(`CREATE TABLE ${name} (${columns})`)
  return name
}

async function count(conn, table) {
  return Number(await conn.queryScalar(`SELECT count(*) FROM ${table}`))
}

/** The connection still answers queries. */
async function assertUsable(conn) {
  assert.equal(await conn.queryScalar('SELECT 41 + 1'), 42)
}

/** deepStrictEqual, with -0 kept apart from 0 and a readable label. */
function sameValue(actual, expected, what) {
  assert.deepStrictEqual(actual, expected, what)
  if (Object.is(expected, -0)) assert.ok(Object.is(actual, -0), `${what}: -0 must stay -0`)
}

/**
 * Asserts that `fn` throws (synchronously) a HyperError with `code`,
 * `row` and `column`, whose message contains each of `names`.
 */
function assertRefused(fn, { code, row, column, names = [] }, label = '') {
  let error
  assert.throws(fn, (e) => {
    error = e
    return true
  })
  assertRefusal(error, { code, row, column, names }, label)
  return error
}

function assertRefusal(error, { code, row, column, names = [] }, label = '') {
  assertHyperError(error, code)
  assert.equal(error.row, row, `${label}: err.row (${error.message})`)
  assert.equal(error.column, column, `${label}: err.column (${error.message})`)
  for (const name of names) {
    assert.ok(error.message.includes(name), `${label}: the message names ${name}: ${error.message}`)
  }
}

async function rejectsRefusal(promiseOrFn, expected, label = '') {
  const error = await rejectsHyper(promiseOrFn, expected.code, label)
  assertRefusal(error, expected, label)
  return error
}

// ---------------------------------------------------------------------------
// Every type

const utc = (iso) => new Date(`${iso}T00:00:00.000Z`)
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
    assert.ok(err instanceof HyperError && err.code === '22003' && err.row === 1 && err.column === 'tm', String(err))
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
    label: 'an impossible dateOnly',
    row: rowWith(3, { dt: dateOnly('2023-02-29') }),
    code: '42804',
    column: 'dt',
    names: ['2023-02-29'],
  },
  { label: 'a number into TEXT', row: rowWith(3, { tx: 42 }), code: '42804', column: 'tx', names: ['42'] },
  { label: 'a REAL out of range', row: rowWith(3, { r: 1e39 }), code: '22003', column: 'r', names: ['1e+39'] },
  { label: 'a negative OID', row: rowWith(3, { o: -1 }), code: '22003', column: 'o', names: ['-1'] },
  { label: 'a Date into NUMERIC', row: rowWith(3, { n5: new Date(0) }), code: '42804', column: 'n5', names: [] },
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

  test('a refused HyperTime, HyperInterval or HyperTimestamp is named in the message', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, 'id INTEGER NOT NULL, tm TIME, iv INTERVAL, ts TIMESTAMP')
    const ins = await conn.inserter(table)
    ins.addRow([0, null, null, null])
    const cases = [
      ['tm', new HyperTime(-1n), '22008'],
      ['tm', new HyperTime(86_400_000_001n), '22008'],
      ['iv', new HyperInterval(2 ** 31, 0, 0n), '22003'],
      ['ts', new HyperTimestamp(2n ** 63n), '22003'],
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

  test('NUMERIC(5,2) "1.234" (rounding) is refused at execute; the table is unchanged', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    await conn.executeCommand(`INSERT INTO ${table} (id) VALUES (100)`)
    for (const [label, value] of [
      ['string', '1.234'],
      ['numeric()', numeric('1.234')],
      ['too many digits', '1000.00'],
    ]) {
      const ins = await conn.inserter(table)
      for (let k = 0; k < 3; k++) ins.addRow(goodRow(k))
      ins.addRow(rowWith(3, { n5: value })) // accepted here: the native layer checks the scale
      ins.addRow(goodRow(4))
      await rejectsRefusal(
        () => ins.execute(),
        { code: '22003', row: 3, column: 'n5', names: [String(value)] },
        `NUMERIC(5,2) ${label}`,
      )
      assertRefused(() => ins.addRow(goodRow(5)), { code: '22023', row: undefined, column: undefined })
      assert.equal(await count(conn, table), 1)
      await assertUsable(conn)
      await ins.cancel() // harmless after a failed execute
    }
  })

  test('NUMERIC(5,2) "1.234" in a full batch is refused when addRow hands the batch over', async () => {
    const conn = await ctx.connect()
    const table = await freshTable(conn, R_SQL)
    await conn.executeCommand(`INSERT INTO ${table} (id) VALUES (100)`)
    const ins = await conn.inserter(table, { batchRows: 2 })
    for (let k = 0; k < 3; k++) ins.addRow(goodRow(k))
    // Row 3 fills the second batch: the hand-over (a sync push) refuses it.
    assertRefused(() => ins.addRow(rowWith(3, { n5: '1.234' })), {
      code: '22003',
      row: 3,
      column: 'n5',
      names: ['1.234'],
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
    assertRefused(() => ins.addRow(rowWith(1, { n5: '1.234' })), { code: '22003', row: 1, column: 'n5' })
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
      for (let k = 0; k < 10; k++) yield k === 3 ? rowWith(3, { n5: '1.234' }) : goodRow(k)
    }
    await rejectsRefusal(() => ins.addRowsFrom(rows()), { code: '22003', row: 3, column: 'n5', names: ['1.234'] })
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
      for (let k = 0; k < 10; k++) yield k === 1 ? rowWith(1, { n5: '1.234' }) : goodRow(k)
    }
    await rejectsRefusal(() => ins.addRowsFrom(rows()), { code: '22003', row: 1, column: 'n5', names: ['1.234'] })
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
    const table = await freshTable(conn, 'id INTEGER NOT NULL, n NUMERIC(5,2)')
    function* rows() {
      for (let k = 0; k < 3 * DEFAULT_BATCH_ROWS; k++) yield [k, k === 100 ? '0.001' : '1.50']
    }
    await rejectsRefusal(() => conn.insertRows(table, rows()), {
      code: '22003',
      row: 100,
      column: 'n',
      names: ['0.001'],
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
      columns: [
        { name: 's', type: 'TEXT' },
        { name: 'id', type: 'INTEGER', nullable: false },
      ],
      row: ['x', 1],
    },
    {
      label: 'a type differs',
      columns: [
        { name: 'id', type: 'BIGINT', nullable: false },
        { name: 's', type: 'TEXT' },
      ],
      row: [1n, 'x'],
    },
    {
      label: 'the length of a VARCHAR differs',
      columns: [
        { name: 'id', type: 'INTEGER', nullable: false },
        { name: 's', type: 'VARCHAR(10)' },
      ],
      row: [1, 'x'],
    },
    {
      label: 'nullability differs',
      columns: [
        { name: 'id', type: 'INTEGER' },
        { name: 's', type: 'TEXT' },
      ],
      row: [1, 'x'],
    },
    {
      label: 'a column missing',
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

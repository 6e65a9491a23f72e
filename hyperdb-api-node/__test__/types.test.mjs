// Every Hyper type round-trips exactly through query (object and array
// rows), queryColumns and queryArrow, and through the row route taken by
// queries with parameters.
import { test, describe, before } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper, rejectsHyper, drain } from './helpers.mjs'
import { HyperTimestamp, HyperTime, HyperInterval } from '../dist/index.mjs'

const ctx = setupHyper()
let conn

before(async () => {
  conn = await ctx.connect()
})

// ---------------------------------------------------------------------------
// Expected values

const utcDate = (iso) => new Date(`${iso}T00:00:00.000Z`)
const MICROS_0001 = -62135596800000000n // 0001-01-01 00:00:00 UTC
const MICROS_9999_END = 253402300799999999n // 9999-12-31 23:59:59.999999 UTC

function bigBytes(n) {
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 0xff
  return b
}
const ONE_MIB = bigBytes(1024 * 1024)

/** `bytes` as SQL: BYTEA literals of at most 16 KiB joined with `||`. */
function bytesLiteral(bytes, part = 16 * 1024) {
  const parts = []
  for (let i = 0; i < bytes.length; i += part) {
    parts.push(`'\\x${bytes.subarray(i, i + part).toString('hex')}'::BYTEA`)
  }
  return parts.join(' || ')
}

/** A SQL string literal. */
const lit = (s) => `'${s.replaceAll("'", "''")}'`

/**
 * Each case: a column type, and rows of [SQL literal, expected JS value as
 * `query` returns it]. A NULL row is appended to every case.
 */
const CASES = [
  {
    type: 'SMALLINT',
    sqlType: 'SMALLINT',
    kind: 'int16',
    rows: [
      ["'-32768'::SMALLINT", -32768],
      ['32767', 32767],
      ['0', 0],
      ['-1', -1],
    ],
  },
  {
    type: 'INTEGER',
    sqlType: 'INTEGER',
    kind: 'int32',
    rows: [
      ["'-2147483648'::INTEGER", -2147483648],
      ['2147483647', 2147483647],
      ['0', 0],
      ['-42', -42],
    ],
  },
  {
    type: 'BIGINT',
    sqlType: 'BIGINT',
    kind: 'int64',
    rows: [
      ["'-9223372036854775808'::BIGINT", -9223372036854775808n],
      ['9223372036854775807', 9223372036854775807n],
      ['0', 0n],
      ['9007199254740993', 9007199254740993n], // 2^53 + 1: not a double
      ['-1', -1n],
    ],
  },
  {
    type: 'REAL',
    sqlType: 'REAL',
    kind: 'float32',
    rows: [
      ["'NaN'::REAL", NaN],
      ["'Infinity'::REAL", Infinity],
      ["'-Infinity'::REAL", -Infinity],
      ["'-0'::REAL", -0],
      ["'3.4028235e38'::REAL", Math.fround(3.4028235e38)],
      ["'-3.4028235e38'::REAL", Math.fround(-3.4028235e38)],
      ["'1.4e-45'::REAL", Math.fround(1.4e-45)], // smallest subnormal
      ["'1.5'::REAL", 1.5],
      ["'0.1'::REAL", Math.fround(0.1)],
    ],
  },
  {
    type: 'DOUBLE PRECISION',
    sqlType: 'DOUBLE PRECISION',
    kind: 'float64',
    rows: [
      ["'NaN'::DOUBLE PRECISION", NaN],
      ["'Infinity'::DOUBLE PRECISION", Infinity],
      ["'-Infinity'::DOUBLE PRECISION", -Infinity],
      ["'-0'::DOUBLE PRECISION", -0],
      ["'1.7976931348623157e308'::DOUBLE PRECISION", Number.MAX_VALUE],
      ["'-1.7976931348623157e308'::DOUBLE PRECISION", -Number.MAX_VALUE],
      ["'5e-324'::DOUBLE PRECISION", Number.MIN_VALUE],
      ["'0.1'::DOUBLE PRECISION", 0.1],
      ["'9007199254740993'::DOUBLE PRECISION", 9007199254740992],
    ],
  },
  {
    type: 'BOOLEAN',
    sqlType: 'BOOLEAN',
    kind: 'bool',
    rows: [
      ['true', true],
      ['false', false],
    ],
  },
  {
    type: 'TEXT',
    sqlType: 'TEXT',
    kind: 'text',
    rows: [
      [lit('héllo wörld ✓ 😀'), 'héllo wörld ✓ 😀'],
      [lit(''), ''], // the empty string is not NULL
      [lit('日本語テキスト'), '日本語テキスト'],
      [lit('family 👨‍👩‍👧 flags 🇫🇷 𝄞'), 'family 👨‍👩‍👧 flags 🇫🇷 𝄞'],
      [lit('it\'s a "quote"\nnew line\ttab'), 'it\'s a "quote"\nnew line\ttab'],
      [lit('😀'.repeat(5000)), '😀'.repeat(5000)],
    ],
  },
  {
    type: 'VARCHAR(20)',
    sqlType: 'VARCHAR(20)',
    kind: 'text',
    rows: [
      [lit('ñandú 😀'), 'ñandú 😀'],
      [lit(''), ''],
      [lit('😀'.repeat(20)), '😀'.repeat(20)], // 20 characters, 80 bytes
    ],
  },
  {
    type: 'CHAR(5)',
    sqlType: 'CHAR(5)',
    kind: 'text',
    rows: [
      [lit('ab'), 'ab   '], // blank-padded
      [lit('é😀'), 'é😀   '],
      [lit('abcde'), 'abcde'],
      [lit(''), '     '],
    ],
  },
  {
    type: 'JSON',
    sqlType: 'JSON',
    kind: 'json',
    rows: [
      [lit('{"a": [1, 2, {"b": "ü😀"}], "c": null}'), '{"a": [1, 2, {"b": "ü😀"}], "c": null}'],
      [lit('[]'), '[]'],
      [lit('"str"'), '"str"'],
    ],
  },
  {
    type: 'BYTEA',
    sqlType: 'BYTEA',
    kind: 'bytes',
    rows: [
      ["'\\x'::BYTEA", Buffer.alloc(0)], // 0 bytes, not NULL
      ["'\\x00ff7f80'::BYTEA", Buffer.from([0x00, 0xff, 0x7f, 0x80])],
      // hyperd refuses a 2 MiB literal ("literal exceeds max literal length"):
      // 64 literals of 16 KiB, concatenated.
      [bytesLiteral(ONE_MIB), ONE_MIB],
    ],
  },
  {
    type: 'NUMERIC(18,3)',
    sqlType: 'NUMERIC(18,3)',
    kind: 'numeric',
    rows: [
      ["'-123.456'::NUMERIC(18,3)", '-123.456'],
      ["'999999999999999.999'::NUMERIC(18,3)", '999999999999999.999'],
      ["'-999999999999999.999'::NUMERIC(18,3)", '-999999999999999.999'],
      ["'0'::NUMERIC(18,3)", '0.000'],
      ["'1.5'::NUMERIC(18,3)", '1.500'],
      ["'-0.001'::NUMERIC(18,3)", '-0.001'],
    ],
  },
  {
    type: 'NUMERIC(38,5)',
    sqlType: 'NUMERIC(38,5)',
    kind: 'numeric',
    rows: [
      ["'99999999999999999999999999999999.99999'::NUMERIC(38,5)", '99999999999999999999999999999999.99999'],
      ["'-99999999999999999999999999999999.99999'::NUMERIC(38,5)", '-99999999999999999999999999999999.99999'],
      ["'12345678901234567890123.45678'::NUMERIC(38,5)", '12345678901234567890123.45678'],
      ["'-0.00001'::NUMERIC(38,5)", '-0.00001'],
      ["'0'::NUMERIC(38,5)", '0.00000'],
    ],
  },
  {
    type: 'DATE',
    sqlType: 'DATE',
    kind: 'date',
    rows: [
      ["DATE '0001-01-01'", utcDate('0001-01-01')],
      ["DATE '9999-12-31'", utcDate('9999-12-31')],
      ["DATE '1970-01-01'", utcDate('1970-01-01')],
      ["DATE '1969-12-31'", utcDate('1969-12-31')],
      ["DATE '2024-02-29'", utcDate('2024-02-29')],
    ],
  },
  {
    type: 'TIME',
    sqlType: 'TIME',
    kind: 'time',
    rows: [
      ["TIME '00:00:00'", new HyperTime(0n)],
      ["TIME '00:00:00.000001'", new HyperTime(1n)],
      ["TIME '12:34:56.789012'", new HyperTime(45296789012n)],
      ["TIME '23:59:59.999999'", new HyperTime(86399999999n)],
    ],
  },
  {
    type: 'TIMESTAMP',
    sqlType: 'TIMESTAMP',
    kind: 'timestamp',
    rows: [
      ["TIMESTAMP '0001-01-01 00:00:00'", new HyperTimestamp(MICROS_0001, false)],
      ["TIMESTAMP '0001-01-01 00:00:00.000001'", new HyperTimestamp(MICROS_0001 + 1n, false)],
      ["TIMESTAMP '9999-12-31 23:59:59.999999'", new HyperTimestamp(MICROS_9999_END, false)],
      ["TIMESTAMP '2024-02-29 12:34:56.123456'", new HyperTimestamp(1709210096123456n, false)],
      ["TIMESTAMP '1969-12-31 23:59:59.999999'", new HyperTimestamp(-1n, false)],
      ["TIMESTAMP '1970-01-01 00:00:00'", new HyperTimestamp(0n, false)],
    ],
  },
  {
    type: 'TIMESTAMPTZ',
    sqlType: /^TIMESTAMP( WITH TIME ZONE|TZ)$/,
    kind: 'timestamptz',
    rows: [
      ["TIMESTAMPTZ '0001-01-01 00:00:00+00'", new HyperTimestamp(MICROS_0001, true)],
      ["TIMESTAMPTZ '9999-12-31 23:59:59.999999+00'", new HyperTimestamp(MICROS_9999_END, true)],
      ["TIMESTAMPTZ '2024-06-01 12:00:00.000001+02'", new HyperTimestamp(1717236000000001n, true)],
      ["TIMESTAMPTZ '1969-12-31 23:59:59.999999+00'", new HyperTimestamp(-1n, true)],
    ],
  },
  {
    type: 'INTERVAL',
    sqlType: 'INTERVAL',
    kind: 'interval',
    rows: [
      ["INTERVAL '1 year 2 months 3 days 04:05:06.789012'", new HyperInterval(14, 3, 14706789012n)],
      ["INTERVAL '-1 months -2 days -00:00:00.000001'", new HyperInterval(-1, -2, -1n)],
      ["INTERVAL '0 seconds'", new HyperInterval(0, 0, 0n)],
      ["INTERVAL '100000 hours'", new HyperInterval(0, 0, 360000000000000n)],
    ],
  },
  {
    type: 'OID',
    sqlType: 'OID',
    kind: 'uint32',
    rows: [
      ["'4294967295'::OID", 4294967295], // unsigned: not -1
      ["'0'::OID", 0],
      ["'2147483648'::OID", 2147483648],
    ],
  },
]

// ---------------------------------------------------------------------------
// Reading helpers

const TYPED_VALUES = {
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint32: Uint32Array,
  float32: Float32Array,
  float64: Float64Array,
  bool: Uint8Array,
  date: Float64Array,
  time: BigInt64Array,
  timestamp: BigInt64Array,
  timestamptz: BigInt64Array,
}

/** What `ColumnVector.values[i]` holds for a non-NULL value `v` of `kind`. */
function rawOf(kind, v) {
  switch (kind) {
    case 'bool':
      return v ? 1 : 0
    case 'date':
      return v.getTime()
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return v.micros
    default:
      return v
  }
}

/** An Arrow decimal (four little-endian 32-bit words, two's complement) as exact text. */
function decimalText(words, scale) {
  let n = 0n
  for (let k = 3; k >= 0; k--) n = (n << 32n) | BigInt(words[k] >>> 0)
  if (n >= 1n << 127n) n -= 1n << 128n
  const neg = n < 0n
  const digits = (neg ? -n : n).toString().padStart(scale + 1, '0')
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
  return (neg ? '-' : '') + text
}

/** Row `i` of Arrow vector `vec` in the representation `query` uses. */
function fromArrow(vec, i, kind) {
  if (!vec.isValid(i)) return null
  const v = vec.get(i)
  switch (kind) {
    case 'bytes':
      assert.ok(v instanceof Uint8Array)
      return Buffer.from(v)
    case 'numeric':
      return decimalText(v, vec.type.scale)
    case 'date':
      assert.equal(typeof v, 'number')
      return new Date(v)
    case 'time':
      assert.equal(typeof v, 'bigint')
      return new HyperTime(v)
    case 'timestamp':
    case 'timestamptz':
      // get() rounds to fractional milliseconds: read the raw microseconds.
      return new HyperTimestamp(vec.toArray()[i], kind === 'timestamptz')
    case 'interval': {
      // MonthDayNano: [months, days, nanos low word, nanos high word]
      const nanos = (BigInt(v[3]) << 32n) | BigInt(v[2] >>> 0)
      assert.equal(nanos % 1000n, 0n)
      return new HyperInterval(v[0], v[1], nanos / 1000n)
    }
    default:
      return v
  }
}

const ARROW_TYPE = {
  int16: /^Int16$/,
  int32: /^Int32$/,
  int64: /^Int64$/,
  uint32: /^Uint32$/,
  float32: /^Float32$/,
  float64: /^Float64$/,
  bool: /^Bool$/,
  text: /^Utf8$/,
  json: /^Utf8$/,
  bytes: /^Binary$/,
  numeric: /^Decimal/,
  date: /^Date/,
  time: /^Time64<MICROSECOND>$/,
  timestamp: /^Timestamp<MICROSECOND>$/,
  timestamptz: /^Timestamp<MICROSECOND, /,
  interval: /^Interval<MONTH_DAY_NANO>$/,
}

const sameValue = (actual, expected, what) => {
  assert.deepStrictEqual(actual, expected, what)
  if (Object.is(expected, -0)) assert.ok(Object.is(actual, -0), `${what}: -0 must stay -0`)
}

/** Checks `query` in both row modes. */
async function checkRows(sql, params, expected, label) {
  const objects = await drain(conn.query(sql, params))
  assert.equal(objects.length, expected.length, `${label}: row count`)
  objects.forEach((row, k) => {
    assert.deepStrictEqual(Object.keys(row), ['id', 'v'])
    assert.equal(row.id, k)
    sameValue(row.v, expected[k], `${label} object row ${k}`)
  })
  const arrays = await drain(conn.query(sql, params, { rowMode: 'array' }))
  assert.equal(arrays.length, expected.length)
  arrays.forEach((row, k) => {
    assert.ok(Array.isArray(row))
    assert.equal(row.length, 2)
    assert.equal(row[0], k)
    sameValue(row[1], expected[k], `${label} array row ${k}`)
  })
}

/** Checks `queryColumns`: values, validity, get(i), isNull(i). */
async function checkColumns(sql, params, c, expected, label) {
  let k = 0
  for await (const chunk of conn.queryColumns(sql, params)) {
    assert.equal(chunk.columns.length, 2)
    const ids = chunk.column('id')
    const vec = chunk.column('v')
    assert.ok(vec, 'column v exists')
    assert.equal(vec.name, 'v')
    assert.equal(vec.kind, c.kind)
    assert.match(
      vec.sqlType,
      c.sqlType instanceof RegExp ? c.sqlType : new RegExp(`^${c.sqlType.replace(/[()]/g, '\\$&')}$`),
    )
    assert.equal(vec.length, chunk.numRows)
    const Typed = TYPED_VALUES[c.kind]
    if (Typed !== undefined) {
      assert.ok(
        vec.values instanceof Typed,
        `${label}: values is a ${Typed.name}, got ${vec.values?.constructor?.name}`,
      )
    } else {
      assert.ok(Array.isArray(vec.values), `${label}: values is an Array`)
    }
    let chunkHasNull = false
    for (let i = 0; i < chunk.numRows; i++, k++) {
      const want = expected[k]
      assert.equal(ids.get(i), k)
      assert.equal(vec.isNull(i), want === null, `${label} isNull(${i})`)
      sameValue(vec.get(i), want, `${label} get(${i})`)
      if (want === null) {
        chunkHasNull = true
        if (Typed === undefined) assert.equal(vec.values[i], null)
      } else {
        sameValue(vec.values[i], rawOf(c.kind, want), `${label} values[${i}]`)
      }
      if (vec.validity !== null) {
        const bit = (vec.validity[i >> 3] >> (i & 7)) & 1
        assert.equal(bit, want === null ? 0 : 1, `${label} validity bit ${i}`)
      }
    }
    if (chunkHasNull) {
      assert.ok(vec.validity instanceof Uint8Array, `${label}: a chunk with a NULL has a validity bitmap`)
    } else {
      assert.equal(vec.validity, null, `${label}: a chunk without NULL has validity null`)
    }
  }
  assert.equal(k, expected.length, `${label}: row count`)
}

/** Checks `queryArrow`: RecordBatch values and toArray(). */
async function checkArrow(sql, params, c, expected, label) {
  let k = 0
  for await (const batch of conn.queryArrow(sql, params)) {
    assert.equal(batch.numCols, 2)
    const field = batch.schema.fields[1]
    assert.equal(field.name, 'v')
    assert.match(String(field.type), ARROW_TYPE[c.kind], `${label}: arrow type ${field.type}`)
    const vec = batch.getChild('v')
    const ids = batch.getChild('id')
    const all = vec.toArray()
    // A decimal's toArray() is its 32-bit words, four a value.
    assert.equal(all.length, batch.numRows * (c.kind === 'numeric' ? 4 : 1))
    for (let i = 0; i < batch.numRows; i++, k++) {
      const want = expected[k]
      assert.equal(ids.get(i), k)
      assert.equal(vec.isValid(i), want !== null, `${label} arrow isValid(${i})`)
      sameValue(fromArrow(vec, i, c.kind), want, `${label} arrow row ${k}`)
      if (want !== null && TYPED_VALUES[c.kind] !== undefined && c.kind !== 'date' && c.kind !== 'bool') {
        // toArray() of a fixed-width column: the values themselves.
        sameValue(all[i], rawOf(c.kind, want), `${label} arrow toArray()[${i}]`)
      } else if (want !== null && (c.kind === 'text' || c.kind === 'json' || c.kind === 'bool')) {
        sameValue(all[i], want, `${label} arrow toArray()[${i}]`)
      }
    }
  }
  assert.equal(k, expected.length, `${label}: arrow row count`)
}

// ---------------------------------------------------------------------------
// Tests

let tableNo = 0

for (const c of CASES) {
  describe(c.type, () => {
    const table = `t_${tableNo++}`
    const expected = [...c.rows.map((r) => r[1]), null]
    const plain = `SELECT id, v FROM ${table} ORDER BY id`
    const withParam = `SELECT id, v FROM ${table} WHERE $1::int = 1 ORDER BY id`

    before(async () => {
      await conn.executeCommand(`CREATE TABLE ${table} (id INT NOT NULL, v ${c.type})`)
      // One INSERT per row: multi-row VALUES needs one type per column.
      for (const [k, [literal]] of c.rows.entries()) {
        assert.equal(await conn.executeCommand(`INSERT INTO ${table} VALUES (${k}, ${literal})`), 1)
      }
      assert.equal(await conn.executeCommand(`INSERT INTO ${table} VALUES (${c.rows.length}, NULL)`), 1)
    })

    test('query (object and array rows)', async () => {
      await checkRows(plain, undefined, expected, c.type)
    })

    test('queryColumns', async () => {
      await checkColumns(plain, undefined, c, expected, c.type)
    })

    test('queryArrow', async () => {
      await checkArrow(plain, undefined, c, expected, c.type)
    })

    test('with a parameter (row route): query, queryColumns, queryArrow', async () => {
      await checkRows(withParam, [1], expected, `${c.type} (param)`)
      await checkColumns(withParam, [1], c, expected, `${c.type} (param)`)
      await checkArrow(withParam, [1], c, expected, `${c.type} (param)`)
    })
  })
}

describe('BIGINT as number', () => {
  test('{ bigint: "number" } reads small values as numbers', async () => {
    const row = await conn.queryOne(
      "SELECT 42::BIGINT a, '-9007199254740992'::BIGINT b, '9007199254740992'::BIGINT c, NULL::BIGINT d",
      undefined,
      { bigint: 'number' },
    )
    assert.deepStrictEqual(row, { a: 42, b: -9007199254740992, c: 9007199254740992, d: null })
    assert.equal(typeof row.a, 'number')
    // The default stays bigint.
    assert.equal(await conn.queryScalar('SELECT 42::BIGINT'), 42n)
  })

  test('{ bigint: "number" } rejects a value past 2^53 with 22003 (query, array rows, queryColumns get)', async () => {
    const sql = "SELECT '9007199254740993'::BIGINT a"
    await rejectsHyper(() => drain(conn.query(sql, undefined, { bigint: 'number' })), '22003')
    await rejectsHyper(() => drain(conn.query(sql, undefined, { bigint: 'number', rowMode: 'array' })), '22003')
    await rejectsHyper(
      () => drain(conn.query("SELECT '-9223372036854775808'::BIGINT a", undefined, { bigint: 'number' })),
      '22003',
    )
    await rejectsHyper(() => conn.queryScalar(sql, undefined, { bigint: 'number' }), '22003')
    const chunks = await drain(conn.queryColumns(sql, undefined, { bigint: 'number' }))
    assert.equal(chunks.length, 1)
    const vec = chunks[0].column('a')
    // values stay exact; get(i) is what refuses.
    assert.equal(vec.values[0], 9007199254740993n)
    let err
    try {
      vec.get(0)
    } catch (e) {
      err = e
    }
    assert.ok(err, 'get(0) throws')
    assert.equal(err.code, '22003')
    assert.equal(err.constructor.name, 'HyperError')
    // The connection still works.
    assert.equal(await conn.queryScalar('SELECT 7::BIGINT', undefined, { bigint: 'number' }), 7)
  })

  test('{ bigint: "number" } with a parameter (row route)', async () => {
    assert.equal(await conn.queryScalar('SELECT 123::BIGINT WHERE $1::int = 1', [1], { bigint: 'number' }), 123)
    await rejectsHyper(
      () => conn.queryScalar("SELECT '9223372036854775807'::BIGINT WHERE $1::int = 1", [1], { bigint: 'number' }),
      '22003',
    )
  })
})

describe('TIMESTAMP / TIME helpers', () => {
  test('HyperTimestamp.toISOString at the ends of the range', async () => {
    const row = await conn.queryOne(
      "SELECT TIMESTAMP '0001-01-01 00:00:00' a, TIMESTAMPTZ '9999-12-31 23:59:59.999999+00' b, TIMESTAMP '2024-02-29 12:34:56.123456' c, TIMESTAMPTZ '1969-12-31 23:59:59.999999+00' d",
    )
    assert.ok(row.a instanceof HyperTimestamp)
    assert.equal(row.a.tz, false)
    assert.equal(row.b.tz, true)
    assert.equal(typeof row.a.micros, 'bigint')
    assert.equal(row.a.toISOString(), '0001-01-01T00:00:00.000000')
    assert.equal(row.b.toISOString(), '9999-12-31T23:59:59.999999Z')
    assert.equal(row.c.toISOString(), '2024-02-29T12:34:56.123456')
    assert.equal(row.d.toISOString(), '1969-12-31T23:59:59.999999Z')
    assert.equal(row.c.toDate().getTime(), Date.UTC(2024, 1, 29, 12, 34, 56, 123))
    assert.equal(row.d.toDate().getTime(), -1)
  })

  test('HyperTime and HyperInterval', async () => {
    const row = await conn.queryOne(
      "SELECT TIME '12:34:56.789012' t, INTERVAL '1 year 2 months 3 days 04:05:06.789012' i",
    )
    assert.ok(row.t instanceof HyperTime)
    assert.equal(row.t.micros, 45296789012n)
    assert.equal(row.t.toString(), '12:34:56.789012')
    assert.ok(row.i instanceof HyperInterval)
    assert.equal(row.i.months, 14)
    assert.equal(row.i.days, 3)
    assert.equal(row.i.micros, 14706789012n)
  })
})

describe('GEOGRAPHY', () => {
  // hyperd accepts GEOGRAPHY (CAST('POINT(1 2)' AS TABLEAU.TABGEOGRAPHY));
  // its values are hyperd's own binary encoding, read as a Buffer. The exact
  // bytes are hyperd's business, so the test checks that every route returns
  // the same non-empty bytes and that hyperd reads them back as the point.
  const expectedText = 'POINT(1.0000000 2.0000000)'

  before(async () => {
    await conn.executeCommand('CREATE TABLE geo (id INT NOT NULL, v GEOGRAPHY)')
    await conn.executeCommand("INSERT INTO geo VALUES (0, CAST('POINT(1 2)' AS TABLEAU.TABGEOGRAPHY))")
    await conn.executeCommand('INSERT INTO geo VALUES (1, NULL)')
  })

  test('reads as the same Buffer through every route', async () => {
    assert.equal(await conn.queryScalar('SELECT CAST(v AS TEXT) FROM geo WHERE id = 0'), expectedText)
    const rows = await conn.queryAll('SELECT id, v FROM geo ORDER BY id')
    const g = rows[0].v
    assert.ok(Buffer.isBuffer(g), 'GEOGRAPHY reads as a Buffer')
    assert.ok(g.length > 0)
    assert.equal(rows[1].v, null)
    const c = { kind: 'bytes', sqlType: 'GEOGRAPHY' }
    const expected = [g, null]
    await checkRows('SELECT id, v FROM geo ORDER BY id', undefined, expected, 'GEOGRAPHY')
    await checkColumns('SELECT id, v FROM geo ORDER BY id', undefined, c, expected, 'GEOGRAPHY')
    await checkArrow('SELECT id, v FROM geo ORDER BY id', undefined, c, expected, 'GEOGRAPHY')
    const p = 'SELECT id, v FROM geo WHERE $1::int = 1 ORDER BY id'
    await checkRows(p, [1], expected, 'GEOGRAPHY (param)')
    await checkColumns(p, [1], c, expected, 'GEOGRAPHY (param)')
    await checkArrow(p, [1], c, expected, 'GEOGRAPHY (param)')
  })
})

describe('UUID and ARRAY', () => {
  // hyperd has no Arrow form for a UUID: it reads as its text, the text
  // hyperd's own ::TEXT gives (its 16 bytes arrive as one little-endian
  // number; values whose halves differ check the byte order).
  const uuids = ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', null, 'ffffffff-0000-0000-0000-00000000000a']

  before(async () => {
    await conn.executeCommand('CREATE TABLE ids (id INT NOT NULL, v UUID)')
    await conn.executeCommand(`INSERT INTO ids VALUES (0, uuid '${uuids[0]}'), (1, NULL), (2, uuid '${uuids[2]}')`)
  })

  test('a UUID reads as its text through every route', async () => {
    assert.deepEqual(
      (await conn.queryAll('SELECT v::TEXT AS t FROM ids ORDER BY id')).map((r) => r.t),
      uuids,
      "hyperd's own text",
    )
    const c = { kind: 'text', sqlType: 'UUID' }
    for (const run of [1, 2]) {
      await checkRows('SELECT id, v FROM ids ORDER BY id', undefined, uuids, `UUID, run ${run}`)
      await checkColumns('SELECT id, v FROM ids ORDER BY id', undefined, c, uuids, `UUID, run ${run}`)
      await checkArrow('SELECT id, v FROM ids ORDER BY id', undefined, c, uuids, `UUID, run ${run}`)
    }
    const p = 'SELECT id, v FROM ids WHERE $1::int = 1 ORDER BY id'
    await checkRows(p, [1], uuids, 'UUID (param)')
    await checkColumns(p, [1], c, uuids, 'UUID (param)')
  })

  test('an ARRAY reads through queryArrow on every run; the row and column reads refuse it (0A000) naming the cast', async () => {
    await conn.executeCommand('CREATE TEMP TABLE arrays (id INT NOT NULL, a INT[], t TEXT[])')
    await conn.executeCommand(
      "INSERT INTO arrays VALUES (0, ARRAY[1, 2, 3], ARRAY['x', 'yy']), (1, NULL, ARRAY['z', NULL]), " +
        '(2, ARRAY[]::INT[], NULL), (3, ARRAY[NULL, 5]::INT[], ARRAY[]::TEXT[])',
    )
    const sql = 'SELECT id, a, t FROM arrays ORDER BY id'
    const lists = (v) => (v === null ? null : Array.from({ length: v.length }, (_, i) => v.get(i)))
    const want = [
      [
        [1, 2, 3],
        ['x', 'yy'],
      ],
      [null, ['z', null]],
      [[], null],
      [[null, 5], []],
    ]
    // Three runs: the route book learns that the result is small, and the
    // batch reads of a list must stay on the Arrow route.
    for (const run of [1, 2, 3]) {
      const table = await conn.queryArrowTable(sql)
      assert.equal(String(table.schema.fields[1].type), 'List<Int32>', `run ${run}`)
      const got = []
      for (let i = 0; i < table.numRows; i++) {
        got.push([lists(table.getChild('a').get(i)), lists(table.getChild('t').get(i))])
      }
      assert.deepEqual(got, want, `run ${run}`)
    }
    let n = 0
    for await (const batch of conn.queryArrow('SELECT array_agg(i) AS a FROM generate_series(1, 100000) i')) {
      const list = batch.getChild('a').get(0)
      assert.equal(list.get(99999), 100000)
      n += list.length
    }
    assert.equal(n, 100000)
    for (const read of [
      () => conn.queryAll(sql),
      () => conn.queryAll('SELECT ARRAY[1, $1] AS a', [2]),
      () => drain(conn.queryColumns(sql)),
      () => conn.queryArrowTable('SELECT ARRAY[1, $1] AS a', [2]),
    ]) {
      const e = await rejectsHyper(read(), '0A000')
      assert.match(e.message, /::TEXT/, e.message)
      assert.equal(await conn.queryScalar('SELECT 1'), 1, 'the connection is free at once')
    }
    assert.equal(await conn.queryScalar('SELECT (ARRAY[1, 2])::TEXT'), '[1,2]')
  })
})

describe('every type in one table', () => {
  const columns = CASES.map((c, j) => ({ name: `c${j}`, ...c }))
  const sqlCols = columns.map((c) => `${c.name} ${c.type}`).join(', ')

  before(async () => {
    await conn.executeCommand(`CREATE TABLE wide (id INT NOT NULL, ${sqlCols})`)
    await conn.executeCommand(`INSERT INTO wide VALUES (0, ${columns.map((c) => c.rows[0][0]).join(', ')})`)
    // NULL in every column.
    await conn.executeCommand(`INSERT INTO wide VALUES (1, ${columns.map(() => 'NULL').join(', ')})`)
  })

  for (const [route, sql, params] of [
    ['plain', 'SELECT * FROM wide ORDER BY id', undefined],
    ['with a parameter', 'SELECT * FROM wide WHERE $1::int = 1 ORDER BY id', [1]],
  ]) {
    test(`values and NULL in every column (${route})`, async () => {
      const rows = await conn.queryAll(sql, params)
      assert.equal(rows.length, 2)
      const arrays = await conn.queryAll(sql, params, { rowMode: 'array' })
      const chunks = await drain(conn.queryColumns(sql, params))
      const table = await conn.queryArrowTable(sql, params)
      assert.equal(table.numRows, 2)
      assert.equal(
        chunks.reduce((n, ch) => n + ch.numRows, 0),
        2,
      )
      const vectorsOf = (name) => {
        const out = []
        for (const ch of chunks) for (let i = 0; i < ch.numRows; i++) out.push(ch.column(name).get(i))
        return out
      }
      for (const [j, c] of columns.entries()) {
        const want = c.rows[0][1]
        sameValue(rows[0][c.name], want, `${c.type} row 0`)
        assert.equal(rows[1][c.name], null, `${c.type} NULL`)
        sameValue(arrays[0][j + 1], want, `${c.type} array row 0`)
        assert.equal(arrays[1][j + 1], null)
        const got = vectorsOf(c.name)
        sameValue(got[0], want, `${c.type} queryColumns`)
        assert.equal(got[1], null)
        const vec = table.getChild(c.name)
        sameValue(fromArrow(vec, 0, c.kind), want, `${c.type} arrow`)
        assert.equal(vec.isValid(1), false, `${c.type} arrow NULL`)
        assert.equal(vec.get(1), null)
      }
    })
  }
})

describe('column names as object keys', () => {
  test('any name is an own property, __proto__ included; a repeated name keeps its last column', async () => {
    const sql = 'SELECT 1 AS "__proto__", 2 AS "constructor", 3 AS "toString", 4 AS a, 5 AS a'
    const rows = [await conn.queryOne(sql), (await conn.queryAll(sql, [1].slice(1)))[0]]
    for await (const row of conn.query(`${sql} WHERE $1 = 1`, [1])) rows.push(row)
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), ['__proto__', 'constructor', 'toString', 'a'])
      assert.equal(Object.getPrototypeOf(row), Object.prototype)
      assert.equal(Object.getOwnPropertyDescriptor(row, '__proto__').value, 1)
      assert.equal(row.constructor, 2)
      assert.equal(row.a, 5)
    }
    // An object value under that name does not become the row's prototype.
    const row = await conn.queryOne('SELECT TIMESTAMP \'2024-01-01 00:00:00\' AS "__proto__"')
    assert.equal(Object.getPrototypeOf(row), Object.prototype)
    assert.ok(Object.getOwnPropertyDescriptor(row, '__proto__').value instanceof HyperTimestamp)
  })
})

describe('results without columns', () => {
  test('SELECT of no columns has its rows in every read style, on either route', async () => {
    for (const [sql, params] of [
      ['SELECT FROM generate_series(1, 3)', []],
      ['SELECT FROM generate_series(1, 3) WHERE $1 = 1', [1]],
    ]) {
      // Twice: a plain query's second run may take the other route.
      for (let run = 0; run < 2; run++) {
        const what = `${sql}, run ${run}`
        assert.deepEqual(await conn.queryAll(sql, params), [{}, {}, {}], what)
        assert.deepEqual(await conn.queryAll(sql, params, { rowMode: 'array' }), [[], [], []], what)
        assert.equal((await drain(conn.query(sql, params))).length, 3, what)
        const chunks = await drain(conn.queryColumns(sql, params))
        assert.equal(
          chunks.reduce((n, c) => n + c.numRows, 0),
          3,
          what,
        )
        assert.ok(chunks.every((c) => c.columns.length === 0))
        const table = await conn.queryArrowTable(sql, params)
        assert.equal(table.numRows, 3, what)
        assert.equal(table.numCols, 0, what)
        await rejectsHyper(() => conn.queryScalar(sql, params), '42703', `queryScalar: ${what}`)
      }
    }
  })
})

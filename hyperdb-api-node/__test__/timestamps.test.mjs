// Timestamps over hyperd's whole range, 4713-01-01 BC to its `infinity`,
// 294276-12-31 23:59:59.999999: rows read every one exactly (a JS `Date`
// ends at year 275760, Arrow's microseconds since 1970 at 294247-01-10),
// and the Arrow-shaped reads refuse what Arrow cannot hold with hyperd's
// own 22008 instead of a wrapped value.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper, rejectsHyper, drain } from './helpers.mjs'
import { HyperTimestamp, HyperError } from '../dist/index.mjs'

const ctx = setupHyper()
let conn

before(async () => {
  conn = await ctx.connect()
})

// TIMESTAMP expressions. hyperd's parser misreads some BC literals
// ('0001-12-31 23:59:59.999999 BC' reads as 0031-01-12 BC), so the BC ones
// are reached by arithmetic.
const VALUES = [
  "'-infinity'::TIMESTAMP", // hyperd's least, 4713-01-01 00:00:00 BC
  "'-infinity'::TIMESTAMP + INTERVAL '1 day 00:00:00.000001'",
  "TIMESTAMP '0001-01-01 00:00:00' - INTERVAL '16000 days 11:59:59.5'", // 0044-03-12 12:00:00.5 BC
  "TIMESTAMP '0001-01-01 00:00:00' - INTERVAL '0.000001 seconds'", // 0001-12-31 23:59:59.999999 BC
  "TIMESTAMP '0001-01-01 00:00:00'",
  "TIMESTAMP '1969-12-31 23:59:59.999999'",
  "TIMESTAMP '2024-02-29 12:34:56.123456'",
  "TIMESTAMP '9999-12-31 23:59:59.999999'",
  "TIMESTAMP '10000-01-01 00:00:00'",
  "TIMESTAMP '275760-09-13 00:00:00'", // the last instant a JS Date holds
  "TIMESTAMP '275760-09-13 00:00:00.000001'",
  "TIMESTAMP '294247-01-10 04:00:54.775807'", // the last Arrow holds
  "TIMESTAMP '294247-01-10 04:00:54.775808'",
  "'infinity'::TIMESTAMP", // hyperd's greatest, 294276-12-31 23:59:59.999999
]

/** hyperd's text of a timestamp (`2024-02-29 12:34:56.5`, `0044-03-15 12:00:00 BC`) as ISO 8601's parts. */
function isoOfHyperText(text) {
  const m = /^(\d+)-(\d\d)-(\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?(?:\+00)?( BC)?$/.exec(text)
  assert.ok(m, `hyperd's text ${text}`)
  const y = m[6] ? 1 - Number(m[1]) : Number(m[1]) // 1 BC is ISO year 0
  const year =
    y < 0 ? `-${String(-y).padStart(6, '0')}` : y > 9999 ? `+${String(y).padStart(6, '0')}` : String(y).padStart(4, '0')
  return `${year}-${m[2]}-${m[3]}T${m[4]}.${(m[5] ?? '').padEnd(6, '0')}`
}

for (const type of ['TIMESTAMP', 'TIMESTAMPTZ']) {
  // hyperd's session time zone is UTC: the TIMESTAMP's wall time is the instant.
  const value = (expr) => `CAST(${expr} AS ${type})`
  const zone = type === 'TIMESTAMPTZ' ? 'Z' : ''
  const select = (cond) =>
    VALUES.map((v, i) => `SELECT ${i} AS i, ${value(v)} AS ts, ${value(v)}::TEXT AS text${cond}`).join(' UNION ALL ') +
    ' ORDER BY i'

  test(`${type}: rows read every value exactly, as hyperd writes it`, async () => {
    for (const [sql, params] of [
      [select(''), []],
      [select(' WHERE $1 = 1'), [1]],
    ]) {
      for (const rowMode of ['object', 'array']) {
        const rows = await conn.queryAll(sql, params, { rowMode })
        assert.equal(rows.length, VALUES.length)
        for (const row of rows) {
          const [ts, text] = rowMode === 'array' ? [row[1], row[2]] : [row.ts, row.text]
          assert.ok(ts instanceof HyperTimestamp)
          assert.equal(ts.tz, type === 'TIMESTAMPTZ')
          assert.equal(
            ts.toISOString(),
            isoOfHyperText(text) + (ts.tz ? 'Z' : ''),
            `${text} (${params.length ? 'rows' : 'routed'})`,
          )
        }
      }
      let n = 0
      for await (const row of conn.query(sql, params)) {
        assert.equal(row.ts.toISOString(), isoOfHyperText(row.text) + (row.ts.tz ? 'Z' : ''))
        n++
      }
      assert.equal(n, VALUES.length)
    }
    const infinity = await conn.queryScalar(`SELECT 'infinity'::${type}`)
    assert.equal(infinity.micros, 9_224_318_015_999_999_999n)
    const least = await conn.queryScalar(`SELECT '-infinity'::${type}`)
    assert.equal(least.micros, -210_863_520_000_000_000n)
  })

  test(`${type}: columns and Arrow refuse a value past Arrow's range with 22008, and the connection goes on`, async () => {
    for (const [sql, params] of [
      [`SELECT 1 AS i, 'infinity'::${type} AS late`, []],
      [`SELECT $1 AS i, ${value("TIMESTAMP '294247-01-10 04:00:54.775808'")} AS late`, [1]],
    ]) {
      for (const read of [
        () => drain(conn.queryColumns(sql, params)),
        () => drain(conn.queryArrow(sql, params)),
        () => drain(conn.queryArrowIpc(sql, params)),
      ]) {
        const err = await rejectsHyper(read(), '22008')
        assert.match(err.message, /"late"/)
        assert.equal(await conn.queryScalar('SELECT 7'), 7)
      }
    }
    // The last value Arrow holds is read by every style alike.
    const last = `SELECT ${value("TIMESTAMP '294247-01-10 04:00:54.775807'")} AS ts`
    for await (const chunk of conn.queryColumns(last)) {
      assert.equal(chunk.columns[0].values[0], 9_223_372_036_854_775_807n)
      assert.equal(chunk.columns[0].get(0).toISOString(), `+294247-01-10T04:00:54.775807${zone}`)
    }
  })
}

test("rows: a timestamp past Arrow's after the first batch fails that read, and the statement's next run reads it", async () => {
  // A plain query is served from Arrow; its first rows are out before
  // hyperd meets the late value, so that read cannot change route.
  await conn.executeCommand('CREATE TEMPORARY TABLE late (i INT NOT NULL, ts TIMESTAMP)')
  await conn.executeCommand("INSERT INTO late SELECT i, TIMESTAMP '2024-01-01' FROM generate_series(1, 300000) g(i)")
  await conn.executeCommand("INSERT INTO late VALUES (300001, 'infinity')")
  for (const [name, read] of [
    ['queryAll', (sql) => conn.queryAll(sql).then((rows) => rows.at(-1).ts)],
    [
      'query',
      async (sql) => {
        let last
        for await (const row of conn.query(sql, undefined, { rowMode: 'array' })) last = row[0]
        return last
      },
    ],
  ]) {
    const sql = `SELECT ${name === 'query' ? 'ts, i' : 'i, ts'} FROM late ORDER BY i`
    await rejectsHyper(read(sql), '22008')
    const last = await read(sql)
    assert.equal(last.toISOString(), '+294276-12-31T23:59:59.999999', name)
  }
  // With a parameter it goes as rows from the first run.
  const rows = await conn.queryAll('SELECT i, ts FROM late WHERE i > $1 ORDER BY i', [300000])
  assert.equal(rows[0].ts.micros, 9_224_318_015_999_999_999n)
})

test("HyperTimestamp's calendar is Date's wherever a Date exists", () => {
  for (let day = -100_000_000; day <= 100_000_000; day += 9_973) {
    const iso = new Date(day * 86_400_000).toISOString()
    const ours = new HyperTimestamp(BigInt(day) * 86_400_000_000n + 45_296_789_012n).toISOString()
    assert.equal(ours, `${iso.slice(0, iso.indexOf('T'))}T12:34:56.789012`)
  }
})

test('HyperTimestamp.toDate() holds what a Date holds and refuses the rest', () => {
  const lastDate = new HyperTimestamp(8_640_000_000_000_000_000n)
  assert.equal(lastDate.toDate().getTime(), 8.64e15)
  assert.equal(new HyperTimestamp(-8_640_000_000_000_000_000n).toDate().getTime(), -8.64e15)
  assert.throws(
    () => new HyperTimestamp(8_640_000_000_001_000_000n).toDate(),
    (e) => e instanceof HyperError && e.code === '22008',
  )
  assert.throws(() => new HyperTimestamp(9_224_318_015_999_999_999n, true).toDate(), /\+294276-12-31T23:59:59\.999999Z/)
})

test('HyperTimestamp.fromDate is a TIMESTAMPTZ by default and refuses an invalid Date', () => {
  const date = new Date('2024-02-29T12:34:56.789Z')
  assert.ok(HyperTimestamp.fromDate(date).equals(new HyperTimestamp(1_709_210_096_789_000n, true)))
  assert.equal(HyperTimestamp.fromDate(date, false).toISOString(), '2024-02-29T12:34:56.789000')
  for (const bad of [new Date('nope'), '2024-02-29', 1_709_210_096_789]) {
    assert.throws(
      () => HyperTimestamp.fromDate(bad),
      (e) => e instanceof HyperError && e.code === '22023',
    )
  }
})

test("an insert refuses a timestamp past Arrow's range, storing nothing", async () => {
  await conn.executeCommand('CREATE TEMPORARY TABLE late_ts (ts TIMESTAMP)')
  const infinity = new HyperTimestamp(9_224_318_015_999_999_999n)
  const err = await rejectsHyper(conn.insertRows('late_ts', [[new HyperTimestamp(0n)], [infinity]]), '22003')
  assert.equal(err.row, 1)
  assert.equal(await conn.queryScalar('SELECT count(*) FROM late_ts'), 0n)
})

test("a parameter takes every timestamp hyperd holds, past Arrow's range too", async () => {
  await conn.executeCommand('CREATE TEMPORARY TABLE late_param (ts TIMESTAMP, tz TIMESTAMPTZ)')
  for (const type of ['TIMESTAMP', 'TIMESTAMPTZ']) {
    const infinity = await conn.queryScalar(`SELECT 'infinity'::${type}`)
    assert.equal(await conn.queryScalar(`SELECT $1::${type} = 'infinity'::${type}`, [infinity]), true)
    const late = await conn.queryScalar(`SELECT ${type} '294250-06-01 12:00:00.000001'`)
    assert.equal(
      await conn.queryScalar('SELECT $1::TEXT', [late]),
      `294250-06-01 12:00:00.000001${type === 'TIMESTAMPTZ' ? '+00' : ''}`,
    )
  }
  const ts = new HyperTimestamp(9_224_318_015_999_999_999n)
  const tz = new HyperTimestamp(9_224_318_015_999_999_999n, true)
  assert.equal(await conn.executeCommand('INSERT INTO late_param VALUES ($1, $2)', [ts, tz]), 1)
  const back = await conn.queryOne('SELECT ts, tz FROM late_param')
  assert.ok(back.ts.equals(ts) && back.tz.equals(tz))
  // One microsecond past hyperd's last is refused before it is sent.
  const err = await rejectsHyper(
    conn.queryScalar('SELECT $1::TIMESTAMP', [new HyperTimestamp(9_224_318_016_000_000_000n)]),
    /^22/,
  )
  assert.match(err.message, /range/)
})

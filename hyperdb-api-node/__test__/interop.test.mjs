// Files written by this package, read back by Tableau's own Hyper API (the
// `tableauhyperapi` Python package `make test` installs into
// .hyperd/pylib): every value must be what Tableau itself sees; and files
// Tableau's API writes, read back by this package. The Rust
// crate's interop test writes the same rows and expects the same file,
// scripts/interop_all_types.json. And the other way round: the rows as
// Tableau's API writes them (scripts/write_hyper.py), read back here.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { setupHyper } from './helpers.mjs'
import {
  Connection,
  HyperDate,
  HyperInterval,
  HyperNumeric,
  HyperTime,
  HyperTimestamp,
  numeric,
  dateOnly,
} from '../dist/index.mjs'

const ctx = setupHyper()
const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

/** `scripts/read_hyper.py` on `file`: the table as Tableau's API reads it, as JSON text. */
function readWithTableau(file, table) {
  return tableauScript('read_hyper.py', file, table)
}

/** `scripts/<script>` with `args` and a log directory, run with Tableau's API; its output. */
function tableauScript(script, ...args) {
  const pylib = path.join(repo, '.hyperd', 'pylib')
  assert.ok(existsSync(path.join(pylib, '.installed')), "Tableau's Hyper API is missing: run `make test`")
  const out = execFileSync('python3', [path.join(repo, 'scripts', script), ...args, ctx.dir], {
    env: { ...process.env, PYTHONPATH: pylib },
  })
  return out.toString().trimEnd()
}

const COLUMNS =
  'id INTEGER NOT NULL, b BOOLEAN, s SMALLINT, i INTEGER, bi BIGINT, r REAL, d DOUBLE PRECISION, o OID, ' +
  'n18 NUMERIC(18,3), n38 NUMERIC(38,10), t TEXT, vc VARCHAR(10), c5 CHAR(5), c1 CHAR(1), j JSON, by BYTEA, ' +
  'date DATE, time TIME, ts TIMESTAMP, tstz TIMESTAMPTZ, iv INTERVAL'

const NAMES = COLUMNS.split(', ').map((c) => c.split(' ')[0])

/** Microseconds since 1970 of a UTC wall time, plus `micros`. */
const at = (y, mo, d, h, mi, s, micros) => BigInt(Date.UTC(y, mo - 1, d, h, mi, s)) * 1000n + BigInt(micros)

// prettier-ignore
const ROWS = [
  [
    1, false, -32768, -2147483648, -9223372036854775808n, -Infinity, NaN, 0,
    numeric('-999999999999999.999'), numeric('-9999999999999999999999999999.9999999999'),
    '', '日本語', 'abcde', 'x', '{"a":[1,2]}', Buffer.alloc(0),
    dateOnly('1066-10-14'), new HyperTime(0n), new HyperTimestamp(at(1850, 3, 4, 5, 6, 7, 123456)),
    new HyperTimestamp(at(1899, 12, 31, 23, 59, 59, 999999), true), new HyperInterval(-14, 3, -123_456_789n),
  ],
  [
    2, true, 32767, 2147483647, 9223372036854775807n, NaN, Infinity, 4294967295,
    numeric('-0.5'), numeric('-0.0000000001'),
    'héllo wörld ✓ 🎉 "quoted" \'single\' \\ back', '0123456789', 'ü✓€ab', 'é', '[]',
    Buffer.from([0x00, 0xff, 0x01, 0x02, 0x5c]),
    dateOnly('9999-12-31'), new HyperTime(86_399_999_999n), new HyperTimestamp(at(2200, 1, 1, 0, 0, 0, 1)),
    new HyperTimestamp(at(2101, 1, 1, 12, 0, 0, 0), true), new HyperInterval(1200, -30, 86_399_999_999n),
  ],
  [
    3, null, null, null, null, -0.5, -0.25, null,
    numeric('999999999999999.999'), numeric('9999999999999999999999999999.9999999999'),
    null, null, null, null, null, null, null, null, null, null, null,
  ],
  [4, ...new Array(20).fill(null)],
]

const EXPECTED = readFileSync(path.join(repo, 'scripts', 'interop_all_types.json'), 'utf8').trimEnd()

for (const [label, insert] of [
  ['insertRows', (conn) => conn.insertRows('all_types', ROWS)],
  [
    'insertColumns (arrays)',
    (conn) => conn.insertColumns('all_types', Object.fromEntries(NAMES.map((n, j) => [n, ROWS.map((r) => r[j])]))),
  ],
  [
    // apache-arrow batches as queryArrowTable reads them back, written again.
    'insertArrow (a Table read by queryArrowTable)',
    async (conn) => {
      await conn.executeCommand(`CREATE TEMPORARY TABLE staged (${COLUMNS})`)
      await conn.insertRows('staged', ROWS)
      return conn.insertArrow('all_types', await conn.queryArrowTable('SELECT * FROM staged ORDER BY id'))
    },
  ],
]) {
  test(`Tableau reads every type exactly: ${label}`, async () => {
    await ctx.ready()
    const file = ctx.dbPath(`interop-${label.replace(/\W+/g, '-')}.hyper`)
    const conn = await Connection.connect({ endpoint: ctx.hyper.endpoint, database: file, createMode: 'create' })
    await conn.executeCommand(`CREATE TABLE all_types (${COLUMNS})`)
    assert.equal(await insert(conn), ROWS.length)
    await conn.close()
    assert.equal(readWithTableau(file, 'all_types'), EXPECTED)
  })
}

/** NUMERIC text without the zeros its scale pads it with. */
const unpadded = (text) => (text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text)

/** A value as comparable text: what was inserted and what a read gives alike. */
function canonical(v) {
  if (v === null) return 'null'
  if (typeof v === 'number' || typeof v === 'boolean') return Object.is(v, -0) ? '-0' : String(v)
  if (typeof v === 'bigint') return `${v}n`
  if (typeof v === 'string') return JSON.stringify(v)
  if (Buffer.isBuffer(v)) return `hex:${v.toString('hex')}`
  if (v instanceof Date) return `date:${v.getTime() / 86_400_000}`
  if (v instanceof HyperDate) return `date:${v.days}`
  // NUMERIC reads as text padded to its scale ('-0.500'): compare the digits.
  if (v instanceof HyperNumeric) return `numeric:${unpadded(v.value)}`
  if (v instanceof HyperTimestamp) return `ts:${v.micros}:${v.tz}`
  if (v instanceof HyperTime) return `time:${v.micros}`
  if (v instanceof HyperInterval) return `iv:${v.months}:${v.days}:${v.micros}`
  throw new Error(`no canonical form for ${v}`)
}

// The other direction: Tableau's API writes the same rows (its catalog
// makes the table, its Inserter the values; scripts/write_hyper.py), and
// this package reads them back value by value, on both read routes.
test("Tableau's own writes read back exactly", async () => {
  await ctx.ready()
  const file = ctx.dbPath('interop-tableau-written.hyper')
  assert.equal(tableauScript('write_hyper.py', file), 'ok')
  const conn = await Connection.connect({ endpoint: ctx.hyper.endpoint, database: file })
  try {
    const numerics = new Set([NAMES.indexOf('n18'), NAMES.indexOf('n38')])
    // A NUMERIC reads as its text: canonical as the number it spells.
    const cell = (v, j) => canonical(numerics.has(j) && typeof v === 'string' ? numeric(v) : v)
    const want = ROWS.map((r) => r.map(cell))
    // Twice: a first run and a repeat may take different routes.
    for (let run = 0; run < 2; run++) {
      const rows = await conn.queryAll('SELECT * FROM all_types ORDER BY id', [], { rowMode: 'array' })
      assert.deepStrictEqual(
        rows.map((r) => r.map(cell)),
        want,
        `run ${run}`,
      )
    }
  } finally {
    await conn.close()
  }
})

// GEOGRAPHY values travel as Hyper's own encoding (bytes, not WKB): read
// from the server, inserted by every Node insert path, and read by
// Tableau's API byte for byte as hyperd made them.
test('Tableau reads GEOGRAPHY written from its bytes exactly', async () => {
  await ctx.ready()
  const file = ctx.dbPath('interop-geography.hyper')
  const conn = await Connection.connect({ endpoint: ctx.hyper.endpoint, database: file, createMode: 'create' })
  const wkt = ['POINT(1 2)', 'LINESTRING(-122.5 37.7, -73.9 40.7)', 'POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))']
  const made = await conn.queryAll(
    `SELECT v, CAST(CAST(v AS TABLEAU.TABGEOGRAPHY) AS GEOGRAPHY) AS g FROM (VALUES ${wkt.map((w) => `('${w}')`).join(', ')}) s(v)`,
  )
  const bytes = wkt.map((w) => made.find((r) => r.v === w).g)
  assert.ok(bytes.every((b) => Buffer.isBuffer(b) && b.length > 0))
  await conn.executeCommand('CREATE TABLE geo (id INTEGER NOT NULL, g GEOGRAPHY)')
  assert.equal(await conn.insertRows('geo', [...bytes.map((b, i) => [i, b]), [3, null]]), 4)
  assert.equal(await conn.insertColumns('geo', { id: [10, 11, 12], g: bytes }), 3)
  await conn.close()
  const hex = (b) => (b === null ? null : `hex:${b.toString('hex')}`)
  const expected = {
    columns: ['id', 'g'],
    rows: [...bytes.map((b, i) => [String(i), hex(b)]), ['3', null], ...bytes.map((b, i) => [String(10 + i), hex(b)])],
  }
  assert.deepEqual(JSON.parse(readWithTableau(file, 'geo')), expected)
})

// insertArrow: apache-arrow tables, batches and raw IPC bytes into a table,
// checked against the table before anything is sent; nothing is stored on
// any error, and the connection stays usable.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import * as arrow from 'apache-arrow'
import { setupHyper, rejectsHyper } from './helpers.mjs'

const ctx = setupHyper()

async function freshTable(conn, name) {
  await conn.executeCommand(
    `CREATE TABLE ${name} (id INTEGER NOT NULL, big BIGINT, x DOUBLE PRECISION, s TEXT, ok BOOLEAN, ts TIMESTAMP)`,
  )
}

function sample(n, offset = 0) {
  const id = Int32Array.from({ length: n }, (_, i) => i + offset)
  return arrow.makeTable({
    id,
    big: BigInt64Array.from({ length: n }, (_, i) => BigInt(i + offset) * 1_000_000_007n),
    x: Float64Array.from({ length: n }, (_, i) => (i % 7 === 0 ? NaN : i * 0.25)),
  })
}

/** A table with every column of `freshTable`, nullable ones with NULLs. */
function fullTable(n) {
  const schema = new arrow.Schema([
    new arrow.Field('id', new arrow.Int32(), false),
    new arrow.Field('big', new arrow.Int64(), true),
    new arrow.Field('x', new arrow.Float64(), true),
    new arrow.Field('s', new arrow.Utf8(), true),
    new arrow.Field('ok', new arrow.Bool(), true),
    new arrow.Field('ts', new arrow.TimestampMicrosecond(), true),
  ])
  const rows = Array.from({ length: n }, (_, i) => ({
    id: i,
    big: i % 3 === 0 ? null : BigInt(i) - 9_000_000_000_000_000_000n,
    x: i % 5 === 0 ? null : -i / 3,
    s: i % 4 === 0 ? null : `grüße ${i} 😀`,
    ok: i % 6 === 0 ? null : i % 2 === 0,
    ts: i % 7 === 0 ? null : 1_700_000_000_123_456n + BigInt(i),
  }))
  const vectors = Object.fromEntries(
    schema.fields
      .filter((f) => f.name !== 'ts')
      .map((f) => [
        f.name,
        arrow.vectorFromArray(
          rows.map((r) => r[f.name]),
          f.type,
        ),
      ]),
  )
  // apache-arrow's builders take timestamps in milliseconds: microseconds
  // go in as raw values with a validity bitmap.
  const nullBitmap = new Uint8Array(Math.ceil(n / 8))
  rows.forEach((r, i) => {
    if (r.ts !== null) nullBitmap[i >> 3] |= 1 << (i & 7)
  })
  vectors.ts = arrow.makeVector(
    arrow.makeData({
      type: schema.fields[5].type,
      length: n,
      nullCount: rows.filter((r) => r.ts === null).length,
      nullBitmap,
      data: BigInt64Array.from(rows, (r) => r.ts ?? 0n),
    }),
  )
  return new arrow.Table(schema, vectors)
}

describe('insertArrow', () => {
  test('a Table, a RecordBatch, batches and IPC bytes all go in, exactly', async () => {
    const conn = await ctx.connect()
    await freshTable(conn, 'every')
    const t = fullTable(500)
    assert.equal(await conn.insertArrow('every', t), 500)
    const back = await conn.queryAll('SELECT * FROM every ORDER BY id')
    assert.equal(back.length, 500)
    for (const [i, r] of back.entries()) {
      assert.equal(r.id, i)
      assert.equal(r.big, i % 3 === 0 ? null : BigInt(i) - 9_000_000_000_000_000_000n)
      assert.equal(r.x, i % 5 === 0 ? null : -i / 3)
      assert.equal(r.s, i % 4 === 0 ? null : `grüße ${i} 😀`)
      assert.equal(r.ok, i % 6 === 0 ? null : i % 2 === 0)
      assert.equal(r.ts === null ? null : r.ts.micros, i % 7 === 0 ? null : 1_700_000_000_123_456n + BigInt(i))
    }

    await conn.executeCommand('CREATE TABLE part (id INTEGER NOT NULL, big BIGINT, x DOUBLE PRECISION)')
    const a = sample(1000)
    const b = sample(2000, 1000)
    assert.equal(await conn.insertArrow('part', a.batches[0]), 1000)
    assert.equal(await conn.insertArrow('part', b.batches), 2000)
    const bytes = arrow.tableToIPC(sample(300, 3000), 'stream')
    assert.equal(await conn.insertArrow({ name: 'part' }, bytes), 300)
    const half = bytes.length >> 1
    assert.equal(await conn.insertArrow('part', [bytes.subarray(0, half), bytes.subarray(half)]), 300)
    const [n, sum, nans] = await conn.queryOne(
      "SELECT count(*), sum(id::BIGINT), count(*) FILTER (WHERE x = 'NaN') FROM part",
      [],
      { rowMode: 'array' },
    )
    assert.equal(n, 3600n)
    assert.equal(sum, BigInt((3299 * 3300) / 2) + BigInt(((3000 + 3299) * 300) / 2))
    assert.ok(nans > 0n)
  })

  test('a schema that does not fit the table is refused before sending; nothing is stored', async () => {
    const conn = await ctx.connect()
    await freshTable(conn, 'strict')
    const wrongType = arrow.makeTable({ id: Float64Array.from([1, 2]) })
    await rejectsHyper(() => conn.insertArrow('strict', wrongType), '42804')
    const unknownColumn = arrow.makeTable({ id: Int32Array.from([1]), nope: Int32Array.from([1]) })
    await rejectsHyper(() => conn.insertArrow('strict', unknownColumn), '42804')
    assert.equal(await conn.queryScalar('SELECT count(*) FROM strict'), 0n)
    assert.equal(await conn.queryScalar('SELECT 7'), 7)
  })

  test('a NULL in a NOT NULL column, a missing table and bad input reject; the connection works', async () => {
    const conn = await ctx.connect()
    await freshTable(conn, 'nn')
    const withNull = new arrow.Table({
      id: arrow.vectorFromArray([1, null], new arrow.Int32()),
    })
    const e = await rejectsHyper(() => conn.insertArrow('nn', withNull))
    assert.ok(['23502', '42804'].includes(e.code), e.code)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn'), 0n)
    await rejectsHyper(() => conn.insertArrow('no_such_table', sample(3)), '42P01')
    await rejectsHyper(() => conn.insertArrow('nn', { not: 'arrow' }), '22023')
    await rejectsHyper(() => conn.insertArrow('nn', Uint8Array.from([1, 2, 3])))
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn'), 0n)
    assert.equal(await conn.queryScalar('SELECT 8'), 8)
  })
})

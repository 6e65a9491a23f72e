// A text value longer than the longest JavaScript string (2^29 - 24
// characters in V8): hyperd holds it, and the reads that make strings
// refuse it by name instead of failing in napi (on either route); the
// connection goes on, and the value reads as BYTEA, as the error says.
import { describe, it, before } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper, rejectsHyper, drain } from './helpers.mjs'

const ctx = setupHyper()
let conn
/** 36 x 15 MB = 540 MB: past 536,870,888 (`repeat` stops at 16 MB). */
const BIG = 540_000_000

before(async () => {
  conn = await ctx.connect()
  await conn.executeCommand(
    `CREATE TABLE big AS SELECT 1 AS id, string_agg(repeat('x', 15000000), '') AS s, 'tail' AS t FROM generate_series(1, 36)`,
  )
})

describe('a text value past the longest JavaScript string', () => {
  it('is refused with 54000 naming its column, on either route', async () => {
    for (const read of [
      () => drain(conn.query('SELECT id, s, t FROM big WHERE id = $1', [1])),
      () => drain(conn.queryColumns('SELECT id, s, t FROM big')),
    ]) {
      const e = await rejectsHyper(read, '54000')
      assert.match(e.message, /column `s`: a value of 540000000 bytes/)
      assert.match(e.message, /BYTEA/)
      assert.equal(await conn.queryScalar('SELECT 42'), 42, 'the connection goes on')
    }
  })

  it('reads as BYTEA', async () => {
    const row = await conn.queryOne('SELECT s::BYTEA AS b, t FROM big')
    assert.ok(Buffer.isBuffer(row.b))
    assert.equal(row.b.length, BIG)
    assert.equal(row.t, 'tail')
  })
})

describe('inserts whose text together passes the longest JavaScript string', () => {
  // 56,000 rows of 10,000 characters: 560M characters, more than one
  // string holds, in fewer rows than a batch's 65,536. The rows share one
  // string, so this process holds little of it.
  const ROWS = 56_000
  const text = 'z'.repeat(10_000)

  it('go in whole through insertRows, addRow and insertColumns', async () => {
    await conn.executeCommand('CREATE TABLE docs (id INT NOT NULL, body TEXT, blob BYTEA)')
    const rows = Array.from({ length: ROWS }, (_, i) => [i, text, null])
    assert.equal(await conn.insertRows('docs', rows), ROWS)
    const ins = await conn.inserter('docs')
    for (const row of rows) ins.addRow(row)
    assert.equal(await ins.execute(), ROWS)
    const ids = Int32Array.from({ length: ROWS }, (_, i) => i)
    const bodies = rows.map(() => text)
    assert.equal(await conn.insertColumns('docs', { id: ids, body: bodies, blob: bodies.map(() => null) }), ROWS)
    const [n, chars, distinct] = await conn.queryOne(
      'SELECT count(*), sum(length(body)), count(DISTINCT id) FROM docs',
      [],
      { rowMode: 'array' },
    )
    assert.deepEqual([n, chars, distinct], [BigInt(3 * ROWS), BigInt(3 * ROWS * text.length), BigInt(ROWS)])
  })
})

describe('large text read back', () => {
  // 2,000 values of 64 KB: each batch's text is one string of megabytes,
  // handed to V8 over the received bytes (ASCII) or copied (other text).
  const ROWS = 2000
  const SIZE = 65536
  const MiB = 1024 * 1024
  const filler = (ch) => `repeat('${ch}', ${SIZE - 8})`

  before(async () => {
    await conn.executeCommand(
      `CREATE TABLE pages AS SELECT g AS id, lpad(g::text, 8, '0') || ${filler('a')} AS ascii,
         lpad(g::text, 8, '0') || ${filler('é')} AS accented FROM generate_series(1, ${ROWS}) g`,
    )
  })

  it('reads every value exactly, ASCII or not, by rows and by columns', async () => {
    const ascii = (id) => String(id).padStart(8, '0') + 'a'.repeat(SIZE - 8)
    const accented = (id) => String(id).padStart(8, '0') + 'é'.repeat(SIZE - 8)
    let n = 0
    for await (const row of conn.query('SELECT id, ascii, accented FROM pages ORDER BY id')) {
      n++
      assert.equal(row.ascii, ascii(row.id))
      assert.equal(row.accented, accented(row.id))
    }
    assert.equal(n, ROWS)
    n = 0
    for await (const chunk of conn.queryColumns('SELECT id, ascii, accented FROM pages ORDER BY id')) {
      const [ids, asciis, accents] = chunk.columns.map((c) => c.values)
      for (let i = 0; i < chunk.numRows; i++) {
        assert.equal(asciis[i], ascii(ids[i]))
        assert.equal(accents[i], accented(ids[i]))
      }
      n += chunk.numRows
    }
    assert.equal(n, ROWS)
  })
})

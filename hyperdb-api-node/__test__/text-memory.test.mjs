// Reads of large text keep memory bounded. A batch's ASCII text of 64 KiB
// or more becomes an external string over the received bytes, which V8
// weighs as its small header unless told their size; the rows of such a
// read allocate little in V8's heap, so nothing else starts a collection.
// Its own file (a process of its own): memory freed by other tests' large
// reads would hide the growth.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { setupHyper } from './helpers.mjs'

const ctx = setupHyper()
let conn
const ROWS = 2000
const SIZE = 65536
const MiB = 1024 * 1024

before(async () => {
  conn = await ctx.connect()
  await conn.executeCommand(
    `CREATE TABLE pages AS SELECT g AS id, lpad(g::text, 8, '0') || repeat('a', ${SIZE - 8}) AS body
       FROM generate_series(1, ${ROWS}) g`,
  )
})

test('four reads of 125 MiB of text grow RSS by far less than their text', async () => {
  // Unweighed, the strings were collected late: RSS grew by 518 MiB over
  // the four reads, against 92-97 MiB weighed.
  const before = process.memoryUsage.rss()
  let peak = before
  for (let r = 0; r < 4; r++) {
    let chars = 0
    for await (const row of conn.query('SELECT body FROM pages', [], { rowMode: 'array' })) {
      chars += row[0].length
      peak = Math.max(peak, process.memoryUsage.rss())
    }
    assert.equal(chars, ROWS * SIZE)
  }
  const grown = (peak - before) / MiB
  console.log(`# four reads of 125 MiB of text: RSS grew by ${grown.toFixed(0)} MiB`)
  assert.ok(grown < 220, `RSS grew by ${grown.toFixed(0)} MiB over four reads of 125 MiB`)
})

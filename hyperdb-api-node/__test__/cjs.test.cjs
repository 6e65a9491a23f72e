// The CommonJS entry (require) works: a tiny round trip.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const api = require('../dist/index.js')

const { HyperProcess, Connection, HyperError, HyperTimestamp, numeric } = api

test('require("../dist/index.js"): start hyperd, create a database, write and read rows', async () => {
  assert.equal(typeof HyperProcess.start, 'function')
  assert.equal(typeof Connection.connect, 'function')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hyperdb-node-'))
  const hyper = await HyperProcess.start()
  try {
    const conn = await Connection.connect({
      endpoint: hyper.endpoint,
      database: path.join(dir, 'cjs.hyper'),
      createMode: 'create',
    })
    await conn.executeCommand('CREATE TABLE t (id INTEGER NOT NULL, name TEXT, amount NUMERIC(18,3), at TIMESTAMP)')
    assert.equal(
      await conn.executeCommand('INSERT INTO t VALUES ($1, $2, $3, $4)', [
        1,
        'één 😀',
        numeric('12.345'),
        new HyperTimestamp(1709210096123456n, false),
      ]),
      1,
    )
    const rows = await conn.queryAll('SELECT * FROM t')
    assert.deepStrictEqual(rows, [
      { id: 1, name: 'één 😀', amount: '12.345', at: new HyperTimestamp(1709210096123456n, false) },
    ])
    await assert.rejects(conn.queryAll('SELECT * FROM missing'), (e) => e instanceof HyperError && e.code === '42P01')
    await conn.close()
  } finally {
    await hyper.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a CommonJS caller gets Arrow results of its own apache-arrow (require), and can write them back', async () => {
  // apache-arrow's CommonJS and ES module builds are separate instances:
  // a Table of the other one is not instanceof this one's Table, and this
  // one's tableToIPC wrote it as 0 bytes.
  const arrow = require('apache-arrow')
  const hyper = await HyperProcess.start()
  try {
    const conn = await Connection.connect({ endpoint: hyper.endpoint })
    const sql = "SELECT g AS id, 'row ' || g AS name FROM generate_series(1, 1000) g"
    const table = await conn.queryArrowTable(sql)
    assert.ok(table instanceof arrow.Table, 'a Table of the required apache-arrow')
    for await (const batch of conn.queryArrow(sql)) assert.ok(batch instanceof arrow.RecordBatch)
    const ipc = arrow.tableToIPC(table, 'stream')
    assert.ok(ipc.byteLength > 1000, `tableToIPC wrote ${ipc.byteLength} bytes`)
    assert.equal(new arrow.Table(table.batches).numRows, 1000)
    assert.deepStrictEqual(arrow.tableFromIPC(ipc).get(999).toJSON(), { id: 1000, name: 'row 1000' })
    await conn.executeCommand('CREATE TEMPORARY TABLE back (id INTEGER, name TEXT)')
    assert.equal(await conn.insertArrow('back', table), 1000)
    assert.equal(await conn.insertArrow('back', ipc), 1000)
    assert.deepStrictEqual(await conn.queryAll('SELECT count(*)::int AS n, sum(id)::int AS s FROM back'), [
      { n: 2000, s: 1001000 },
    ])
    await conn.close()
  } finally {
    await hyper.close()
  }
})

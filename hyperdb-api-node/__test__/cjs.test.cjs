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

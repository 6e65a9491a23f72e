// Catalog (schemas, tables, databases), transactions and disposal.
import { test, describe, before } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { setupHyper, rejectsHyper, assertHyperError, withTimeout } from './helpers.mjs'
import { Connection, HyperProcess, HyperError, SqlType } from '../dist/index.mjs'

const ctx = setupHyper()
let conn
let catalog

before(async () => {
  conn = await ctx.connect()
  catalog = conn.catalog
})

/** Every type, through the SqlType helpers and as strings, with the name hyperd reports. */
const COLUMNS = [
  { name: 'id', type: SqlType.int(), nullable: false, reported: 'INTEGER' },
  { name: 'flag', type: SqlType.bool(), reported: 'BOOLEAN' },
  { name: 'small', type: SqlType.smallInt(), reported: 'SMALLINT' },
  { name: 'big', type: SqlType.bigInt(), nullable: false, reported: 'BIGINT' },
  { name: 'r', type: SqlType.real(), reported: 'REAL' },
  { name: 'd', type: SqlType.double(), reported: 'DOUBLE PRECISION' },
  { name: 'o', type: SqlType.oid(), reported: 'OID' },
  { name: 't', type: SqlType.text(), nullable: false, reported: 'TEXT' },
  { name: 'v', type: SqlType.varchar(10), reported: 'VARCHAR(10)' },
  { name: 'c', type: SqlType.char(3), reported: 'CHAR(3)' },
  { name: 'j', type: SqlType.json(), reported: 'JSON' },
  { name: 'b', type: SqlType.bytes(), reported: 'BYTEA' },
  { name: 'g', type: SqlType.geography(), reported: 'GEOGRAPHY' },
  { name: 'n18', type: SqlType.numeric(18, 3), reported: 'NUMERIC(18,3)' },
  { name: 'n38', type: SqlType.numeric(38, 5), nullable: false, reported: 'NUMERIC(38,5)' },
  { name: 'dt', type: SqlType.date(), reported: 'DATE' },
  { name: 'tm', type: SqlType.time(), reported: 'TIME' },
  { name: 'ts', type: SqlType.timestamp(), reported: 'TIMESTAMP' },
  { name: 'tz', type: SqlType.timestampTz(), reported: 'TIMESTAMP WITH TIME ZONE' },
  { name: 'iv', type: SqlType.interval(), reported: 'INTERVAL' },
  // Plain strings work too.
  { name: 's_int', type: 'INT', nullable: false, reported: 'INTEGER' },
  { name: 's_varchar', type: 'varchar(20)', reported: 'VARCHAR(20)' },
  { name: 's_numeric', type: 'NUMERIC(10,2)', reported: 'NUMERIC(10,2)' },
  { name: 's_tz', type: 'TIMESTAMPTZ', reported: 'TIMESTAMP WITH TIME ZONE' },
]

function checkDefinition(def, schema, name) {
  assert.equal(def.name.name, name)
  assert.equal(def.name.schema, schema)
  assert.equal(def.columns.length, COLUMNS.length)
  def.columns.forEach((col, i) => {
    const want = COLUMNS[i]
    assert.equal(col.name, want.name)
    assert.equal(col.type, want.reported, want.name)
    // A SqlType helper spells its type as hyperd reports it, so a
    // definition made with them equals the one read back.
    if (!want.name.startsWith('s_')) assert.equal(want.type, want.reported, `SqlType for ${want.name}`)
    assert.equal(col.nullable, want.nullable ?? true, `${want.name} nullability`)
  })
}

describe('schemas and tables', () => {
  test('SqlType helpers spell SQL types', () => {
    assert.equal(SqlType.varchar(10), 'VARCHAR(10)')
    assert.equal(SqlType.numeric(38, 5), 'NUMERIC(38,5)')
    assert.equal(SqlType.numeric(18), 'NUMERIC(18,0)')
    assert.equal(SqlType.double(), 'DOUBLE PRECISION')
    assert.throws(
      () => SqlType.varchar(-1),
      (e) => e instanceof HyperError && e.code === '22023',
    )
    assert.throws(
      () => SqlType.char(1.5),
      (e) => e instanceof HyperError && e.code === '22023',
    )
    // Types Hyper does not have are refused where they are made, as
    // createTable refuses them, not at createTable.
    for (const make of [() => SqlType.numeric(39, 40), () => SqlType.numeric(10, 11), () => SqlType.numeric(0)]) {
      assert.throws(make, (e) => e instanceof HyperError && e.code === '22023' && /NUMERIC/i.test(e.message))
    }
  })

  test('createSchema / hasSchema / getSchemaNames', async () => {
    assert.equal(await catalog.hasSchema('sales'), false)
    await catalog.createSchema('sales')
    assert.equal(await catalog.hasSchema('sales'), true)
    assert.equal(await catalog.hasSchema({ name: 'sales' }), true)
    const names = (await catalog.getSchemaNames()).map((s) => s.name)
    assert.ok(names.includes('sales'))
    assert.ok(names.includes('public'))
    // An existing schema: an error, unless ifNotExists.
    await rejectsHyper(() => catalog.createSchema('sales'), '42710')
    await catalog.createSchema('sales', { ifNotExists: true })
  })

  test('createTable with every type, NOT NULL columns; hasTable; getTableDefinition round-trips', async () => {
    const name = { schema: 'sales', name: 'everything' }
    assert.equal(await catalog.hasTable(name), false)
    await catalog.createTable({
      name,
      columns: COLUMNS.map(({ name: n, type, nullable }) => ({
        name: n,
        type,
        ...(nullable === undefined ? {} : { nullable }),
      })),
    })
    assert.equal(await catalog.hasTable(name), true)
    assert.equal(await catalog.hasTable('everything'), false) // not in public
    const def = await catalog.getTableDefinition(name)
    checkDefinition(def, 'sales', 'everything')
    // The definition read back creates the same table again.
    await catalog.createTable({ ...def, name: { schema: 'sales', name: 'copy' } })
    checkDefinition(await catalog.getTableDefinition({ schema: 'sales', name: 'copy' }), 'sales', 'copy')
    // NOT NULL is enforced.
    await rejectsHyper(
      () => conn.executeCommand("INSERT INTO sales.everything (id, big, t, n38, s_int) VALUES (NULL, 1, 'x', 1, 1)"),
      '23502',
    )
    assert.equal(
      await conn.executeCommand("INSERT INTO sales.everything (id, big, t, n38, s_int) VALUES (1, 1, 'x', 1, 1)"),
      1,
    )
    assert.deepStrictEqual(await conn.queryOne('SELECT id, big, t, n38, v FROM sales.everything'), {
      id: 1,
      big: 1n,
      t: 'x',
      n38: '1.00000',
      v: null,
    })
  })

  test('getTableNames', async () => {
    await catalog.createTable({ name: 'p1', columns: [{ name: 'a', type: 'INT' }] })
    await catalog.createTable({
      name: { schema: 'public', name: 'p2' },
      columns: [{ name: 'a', type: SqlType.text() }],
    })
    const publicNames = (await catalog.getTableNames()).map((t) => t.name).sort()
    assert.deepStrictEqual(publicNames, ['p1', 'p2'])
    const sales = await catalog.getTableNames('sales')
    assert.deepStrictEqual(sales.map((t) => t.name).sort(), ['copy', 'everything'])
    assert.ok(sales.every((t) => t.schema === 'sales'))
  })

  test('createTable of an existing table rejects with 42P07; ifNotExists does not', async () => {
    await catalog.createTable({ name: 'dup', columns: [{ name: 'a', type: 'INT' }] })
    await rejectsHyper(() => catalog.createTable({ name: 'dup', columns: [{ name: 'a', type: 'INT' }] }), '42P07')
    await catalog.createTable({ name: 'dup', columns: [{ name: 'other', type: 'TEXT' }] }, { ifNotExists: true })
    // Unchanged.
    const def = await catalog.getTableDefinition('dup')
    assert.deepStrictEqual(
      def.columns.map((c) => c.name),
      ['a'],
    )
  })

  test('an unknown type rejects with 22023', async () => {
    await rejectsHyper(
      () => catalog.createTable({ name: 'bad', columns: [{ name: 'a', type: 'NOT_A_TYPE' }] }),
      '22023',
    )
    assert.equal(await catalog.hasTable('bad'), false)
  })

  test('dropTable (+ ifExists); getTableDefinition of a missing table', async () => {
    await catalog.createTable({ name: 'gone', columns: [{ name: 'a', type: 'INT' }] })
    assert.equal(await catalog.hasTable('gone'), true)
    await catalog.dropTable('gone')
    assert.equal(await catalog.hasTable('gone'), false)
    await rejectsHyper(() => catalog.dropTable('gone'), '42P01')
    await catalog.dropTable('gone', { ifExists: true })
    await rejectsHyper(() => catalog.getTableDefinition('gone'), '42P01')
    await rejectsHyper(() => conn.queryAll('SELECT * FROM gone'), '42P01')
    // A part given as null (as JSON carries an absent one) is absent; one
    // of another kind is refused, naming it.
    assert.equal(await catalog.hasTable({ name: 'gone', schema: null, database: null }), false)
    const e = await rejectsHyper(() => catalog.hasTable({ name: 'gone', schema: 5 }), '22023')
    assert.match(e.message, /schema is a string, not number/)
  })

  test('a table made again with a nullable column reads its NULLs in every style', async () => {
    // The statement's earlier runs saw the column NOT NULL; that must not
    // refuse the NULL now (it did, on every later run until close()).
    await conn.executeCommand('CREATE TABLE remade (a INT NOT NULL)')
    await conn.executeCommand('INSERT INTO remade VALUES (1)')
    for (let i = 0; i < 3; i++) assert.deepEqual(await conn.queryAll('SELECT a FROM remade'), [{ a: 1 }])
    await conn.executeCommand('DROP TABLE remade')
    await conn.executeCommand('CREATE TABLE remade (a INT)')
    await conn.executeCommand('INSERT INTO remade VALUES (NULL)')
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await conn.queryAll('SELECT a FROM remade'), [{ a: null }], `run ${i}`)
      const table = await conn.queryArrowTable('SELECT a FROM remade')
      assert.equal(table.getChild('a').get(0), null, `queryArrowTable, run ${i}`)
      for await (const chunk of conn.queryColumns('SELECT a FROM remade')) {
        assert.equal(chunk.numRows, 1)
        assert.equal(chunk.columns[0].isNull(0), true, `queryColumns, run ${i}`)
        assert.equal(chunk.columns[0].get(0), null, `queryColumns, run ${i}`)
      }
    }
    await conn.executeCommand('DROP TABLE remade')
  })
})

async function drainColumns(chunks) {
  for await (const chunk of chunks) void chunk
}

describe('transactions', () => {
  before(async () => {
    await conn.executeCommand('CREATE TABLE ledger (id INTEGER NOT NULL, amount INTEGER)')
  })

  const count = async () => Number(await conn.queryScalar('SELECT count(*) FROM ledger'))

  test('commits when the function resolves, and returns its value', async () => {
    const before = await count()
    const result = await conn.transaction(async (tx) => {
      assert.equal(tx, conn)
      await tx.executeCommand('INSERT INTO ledger VALUES (1, 10)')
      await tx.executeCommand('INSERT INTO ledger VALUES ($1, $2)', [2, 20])
      // Visible inside the transaction.
      assert.equal(Number(await tx.queryScalar('SELECT count(*) FROM ledger')), before + 2)
      return 'done'
    })
    assert.equal(result, 'done')
    assert.equal(await count(), before + 2)
    // Committed: another connection to the same database sees the rows.
    const other = await ctx.connect({ database: ctx.dbPath('db0.hyper') })
    assert.equal(Number(await other.queryScalar('SELECT sum(amount) FROM ledger')), 30)
    await other.close()
  })

  test('rolls back when the function throws; the error is rethrown; the connection works', async () => {
    const before = await count()
    const boom = new Error('boom in the transaction')
    await assert.rejects(
      conn.transaction(async (tx) => {
        await tx.executeCommand('INSERT INTO ledger VALUES (3, 30)')
        assert.equal(await count(), before + 1)
        throw boom
      }),
      (e) => e === boom,
    )
    assert.equal(await count(), before)
    assert.equal(await conn.queryScalar('SELECT 1 + 1'), 2)
  })

  test('an inserter fn leaves open is cancelled: a throw is rethrown, a return rejects (25000); nothing stored', async () => {
    const before = await count()
    /** A transaction that inserts a row, then opens an inserter, adds a row and ends as `end` says. */
    const leaveOpen = (end, label) =>
      withTimeout(
        conn.transaction(async (tx) => {
          await tx.executeCommand('INSERT INTO ledger VALUES (4, 40)')
          const ins = await tx.inserter('ledger')
          ins.addRow([5, 50])
          return end(ins)
        }),
        10_000,
        label,
      )
    // The inserter's bad row throws out of fn with the inserter open.
    const thrown = await rejectsHyper(
      () => leaveOpen((ins) => ins.addRow([null, 1]), 'transaction with an open inserter'),
      '23502',
    )
    assert.equal(thrown.row, 1)
    assert.equal(await count(), before)
    // Returned with one open: its rows were never stored, so neither is the rest.
    const left = await rejectsHyper(
      () => leaveOpen(() => 'forgot execute', 'transaction returning with an open inserter'),
      '25000',
    )
    assert.match(left.message, /inserter still open/)
    assert.equal(await count(), before)
    // An executed inserter is no problem, and the connection is idle again.
    await conn.transaction(async (tx) => {
      const ins = await tx.inserter('ledger')
      ins.addRow([5, 50])
      assert.equal(await ins.execute(), 1)
    })
    assert.equal(await count(), before + 1)
  })

  test('values Arrow cannot carry read inside a transaction, which still commits', async () => {
    await conn.executeCommand('CREATE TABLE valid (id INTEGER NOT NULL, valid_to TIMESTAMP)')
    await conn.executeCommand("INSERT INTO valid VALUES (1, 'infinity')")
    const [row, time] = await conn.transaction(async (tx) => {
      await tx.executeCommand('INSERT INTO valid VALUES (2, NULL)')
      return [
        await tx.queryOne('SELECT valid_to FROM valid WHERE id = 1'),
        await tx.queryScalar("SELECT '24:00:00'::time"),
      ]
    })
    assert.equal(row.valid_to.micros, 9224318015999999999n)
    assert.equal(time.micros, 86_400_000_000n)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM valid'), 2n)
    // Arrow itself cannot hold it: its own error (22008), and the transaction goes on.
    await conn.transaction(async (tx) => {
      await rejectsHyper(drainColumns(tx.queryColumns("SELECT '294270-01-01'::timestamp AS t")), '22008')
      await tx.executeCommand('INSERT INTO valid VALUES (3, NULL)')
    })
    assert.equal(await conn.queryScalar('SELECT count(*) FROM valid'), 3n)
  })

  test('rejects with 25P02, storing nothing, when fn caught a failed statement', async () => {
    const before = await count()
    const err = await rejectsHyper(
      () =>
        conn.transaction(async (tx) => {
          await tx.executeCommand('INSERT INTO ledger VALUES (6, 60)')
          await rejectsHyper(tx.executeCommand('INSERT INTO ledger VALUES (NULL, 1)'), '23502')
          return 'fn resolved'
        }),
      '25P02',
    )
    assert.match(err.message, /rolled back/)
    assert.equal(await count(), before)
    // The connection is idle again: a transaction after it commits.
    await conn.transaction(async (tx) => {
      await tx.executeCommand('INSERT INTO ledger VALUES (7, 70)')
    })
    assert.equal(await count(), before + 1)
  })

  test('rejects with 25P02 when the caught failure, or a statement after it, had parameters', async () => {
    // hyperd does not fail a transaction for an error of a statement with
    // parameters, and one sent into a failed transaction clears the failure.
    const cases = {
      'a failed statement with parameters': async (tx) => {
        await rejectsHyper(tx.executeCommand('INSERT INTO ledger VALUES ($1, 1)', [null]), '23502')
      },
      'a plain failure, then a statement with parameters': async (tx) => {
        await rejectsHyper(tx.executeCommand('INSERT INTO missing_table VALUES (1)'), '42P01')
        await tx.queryScalar('SELECT $1::INT', [1]).catch(() => undefined)
      },
    }
    for (const [label, fail] of Object.entries(cases)) {
      const before = await count()
      await rejectsHyper(
        () =>
          conn.transaction(async (tx) => {
            await tx.executeCommand('INSERT INTO ledger VALUES (8, 80)')
            await fail(tx)
            await tx.executeCommand('INSERT INTO ledger VALUES (9, 90)').catch(() => undefined)
            return 'fn resolved'
          }),
        '25P02',
        label,
      )
      assert.equal(await count(), before, label)
    }
  })

  test('a COMMIT sent by hand after a failed statement stores nothing, whatever reads it', async () => {
    // hyperd commits the writes around a failed statement with parameters
    // when the COMMIT comes as a query: it goes as ROLLBACK.
    const reads = {
      executeCommand: (sql) => conn.executeCommand(sql),
      queryAll: (sql) => conn.queryAll(sql),
      queryArrowTable: (sql) => conn.queryArrowTable(sql),
      queryColumns: async (sql) => {
        for await (const _ of conn.queryColumns(sql));
      },
      queryArrowIpc: async (sql) => {
        for await (const _ of conn.queryArrowIpc(sql));
      },
    }
    for (const [label, read] of Object.entries(reads)) {
      const before = await count()
      await conn.executeCommand('BEGIN')
      await conn.executeCommand('INSERT INTO ledger VALUES (10, 100)')
      await rejectsHyper(conn.executeCommand('INSERT INTO ledger VALUES ($1, 1)', [null]), '23502')
      await read('COMMIT')
      assert.equal(await count(), before, label)
    }
  })

  test('rolls back when a statement inside fails (a HyperError)', async () => {
    const before = await count()
    const err = await rejectsHyper(
      () =>
        conn.transaction(async (tx) => {
          await tx.executeCommand('INSERT INTO ledger VALUES (4, 40)')
          await tx.executeCommand('INSERT INTO ledger VALUES (NULL, 1)')
        }),
      '23502',
    )
    assert.ok(err instanceof HyperError)
    assert.equal(await count(), before)
    // A new transaction after it works.
    await conn.transaction(async (tx) => {
      await tx.executeCommand('INSERT INTO ledger VALUES (5, 50)')
    })
    assert.equal(await count(), before + 1)
  })
})

describe('transactions, one at a time', () => {
  before(async () => {
    await conn.executeCommand('CREATE TABLE tx_one (id INTEGER NOT NULL)')
  })

  const ids = async () => (await conn.queryAll('SELECT id FROM tx_one ORDER BY id')).map((r) => r.id)

  test('a second transaction while one runs rejects with 25001 and sends nothing; the first commits', async () => {
    await conn.executeCommand('DELETE FROM tx_one')
    let release
    const gate = new Promise((resolve) => (release = resolve))
    const first = conn.transaction(async (tx) => {
      await tx.executeCommand('INSERT INTO tx_one VALUES (1)')
      await gate
      return 'first'
    })
    // A ROLLBACK of this one would have undone the first one's row.
    await rejectsHyper(
      () =>
        conn.transaction(async (tx) => {
          await tx.executeCommand('INSERT INTO tx_one VALUES (2)')
          throw new Error('never runs')
        }),
      '25001',
    )
    release()
    assert.equal(await first, 'first')
    assert.deepStrictEqual(await ids(), [1])
    // Nested in fn: refused too, and fn's error rolls the outer one back.
    await rejectsHyper(
      () =>
        conn.transaction(async (tx) => {
          await tx.executeCommand('INSERT INTO tx_one VALUES (3)')
          await tx.transaction(async () => undefined)
        }),
      '25001',
    )
    assert.deepStrictEqual(await ids(), [1])
    await rejectsHyper(() => conn.transaction(42), '22023')
  })

  test('leaving a large result early inside a transaction keeps its writes (queryOne, break)', async () => {
    await conn.executeCommand('DELETE FROM tx_one')
    const big = 'SELECT g FROM generate_series(1, 2000000) g'
    await conn.transaction(async (tx) => {
      await tx.executeCommand('INSERT INTO tx_one VALUES (10)')
      // No ORDER BY: hyperd's parallel scan may hand any row first.
      const one = await tx.queryOne(big)
      assert.ok(one.g >= 1 && one.g <= 2000000, `row ${JSON.stringify(one)}`)
      for await (const row of tx.query(big)) {
        assert.ok(row.g >= 1 && row.g <= 2000000, `row ${row.g}`)
        break
      }
      await tx.executeCommand('INSERT INTO tx_one VALUES (11)')
    })
    assert.deepStrictEqual(await ids(), [10, 11])
  })
})

describe('databases', () => {
  test('createDatabase, attach with an alias, CREATE TABLE in it via SQL, query, detach', async () => {
    const second = ctx.dbPath('second.hyper')
    await catalog.createDatabase(second)
    assert.ok(fs.existsSync(second), 'the .hyper file exists')
    await catalog.createDatabase(second, { ifNotExists: true })
    const before = await catalog.getDatabaseNames()
    assert.equal(before.length, 1)
    await catalog.attachDatabase(second, 'other')
    // Sorted, the connection's own database among them.
    assert.deepStrictEqual(await catalog.getDatabaseNames(), [...before, 'other'].sort())
    const schemas = await catalog.getSchemaNames('other')
    assert.deepStrictEqual(
      schemas.map((s) => [s.database, s.name]),
      [['other', 'public']],
    )
    await conn.executeCommand('CREATE TABLE other.public.x (id INTEGER NOT NULL, label TEXT)')
    assert.equal(await conn.executeCommand("INSERT INTO other.public.x VALUES (1, 'one'), (2, 'two')"), 2)
    assert.deepStrictEqual(await conn.queryAll('SELECT id, label FROM other.public.x ORDER BY id'), [
      { id: 1, label: 'one' },
      { id: 2, label: 'two' },
    ])
    assert.equal(await catalog.hasTable({ database: 'other', schema: 'public', name: 'x' }), true)
    const tables = await catalog.getTableNames({ database: 'other', name: 'public' })
    assert.deepStrictEqual(
      tables.map((t) => [t.database, t.schema, t.name]),
      [['other', 'public', 'x']],
    )
    await catalog.detachDatabase('other')
    assert.deepStrictEqual(await catalog.getDatabaseNames(), before)
    const err = await rejectsHyper(() => conn.queryAll('SELECT * FROM other.public.x'))
    assert.match(err.code, /^(3F000|42P01|3D000)$/)
    // A catalog lookup in a database not attached names it (not hyperd's
    // `schema "other"."pg_catalog" does not exist`).
    for (const lookup of [
      () => catalog.getSchemaNames('other'),
      () => catalog.hasTable({ database: 'other', schema: 'public', name: 'x' }),
      () => catalog.getTableNames({ database: 'other', name: 'public' }),
      () => catalog.getTableDefinition({ database: 'other', schema: 'public', name: 'x' }),
    ]) {
      const e = await rejectsHyper(lookup, '3D000')
      assert.match(e.message, /database "other" is not attached/)
      assert.match(e.hint, /catalog\.attachDatabase.*catalog\.getDatabaseNames\(\)/)
    }
    // The rows are in the file: open it directly.
    const direct = await ctx.connect({ database: second, createMode: 'doNotCreate' })
    assert.equal(await direct.queryScalar('SELECT count(*) FROM x'), 2n)
    // Named by its stem, as Tableau's Hyper API names it.
    assert.equal(await direct.queryScalar('SELECT current_database()'), 'second')
    assert.equal(await direct.queryScalar('SELECT count(*) FROM "second"."public"."x"'), 2n)
    await direct.close()
  })

  test('dropDatabase (+ ifExists)', async () => {
    const third = ctx.dbPath('third.hyper')
    await catalog.createDatabase(third)
    assert.ok(fs.existsSync(third))
    await catalog.dropDatabase(third)
    assert.equal(fs.existsSync(third), false)
    await catalog.dropDatabase(third, { ifExists: true })
    await rejectsHyper(() => catalog.dropDatabase(third))
  })
})

describe('disposal (Symbol.asyncDispose)', () => {
  const AsyncFunction = (async () => {}).constructor
  let awaitUsing = true
  try {
    new AsyncFunction('await using x = null')
  } catch {
    awaitUsing = false // Node 20 does not parse `await using`
  }

  test('Connection', async () => {
    let c
    if (awaitUsing) {
      const body =
        'let seen; { await using c = await connect(); seen = c; await c.queryScalar("SELECT 1") } return seen'
      c = await new AsyncFunction('connect', body)(() => Connection.connect({ endpoint: ctx.hyper.endpoint }))
    } else {
      c = await Connection.connect({ endpoint: ctx.hyper.endpoint })
      assert.equal(await c.queryScalar('SELECT 1'), 1)
      assert.equal(typeof c[Symbol.asyncDispose], 'function')
      await c[Symbol.asyncDispose]()
    }
    assert.equal(c.isClosed, true)
    await rejectsHyper(() => c.queryScalar('SELECT 1'), '08003')
    // Disposing twice is fine.
    await c[Symbol.asyncDispose]()
  })

  test('HyperProcess', async () => {
    let hyper
    if (awaitUsing) {
      const body = 'let seen; { await using h = await start(); seen = h } return seen'
      hyper = await new AsyncFunction('start', body)(() => HyperProcess.start())
    } else {
      hyper = await HyperProcess.start()
      const c = await Connection.connect({ endpoint: hyper.endpoint })
      assert.equal(await c.queryScalar('SELECT 2'), 2)
      await c.close()
      assert.equal(typeof hyper[Symbol.asyncDispose], 'function')
      await hyper[Symbol.asyncDispose]()
    }
    // hyperd is gone.
    assert.throws(
      () => process.kill(hyper.pid, 0),
      (e) => e.code === 'ESRCH',
    )
    await hyper[Symbol.asyncDispose]()
    let err
    try {
      await Connection.connect({ endpoint: hyper.endpoint, connectTimeoutMs: 5000 })
    } catch (e) {
      err = e
    }
    assertHyperError(err, /^08/)
  })
})

test('a bare name resolves as a statement does (a temporary table first); definitions are named in full', async () => {
  const c = await ctx.connect({ database: ctx.dbPath('resolve.hyper'), createMode: 'createAndReplace' })
  await c.catalog.createTable({ name: 't', columns: [{ name: 'a', type: SqlType.int() }] })
  await c.catalog.createTable({
    name: 'tmp',
    columns: [{ name: 'c', type: SqlType.text(), nullable: false }],
    persistence: 'temporary',
  })
  assert.equal(await c.catalog.hasTable('tmp'), true)
  assert.equal(await c.catalog.hasTable({ schema: 'public', name: 'tmp' }), false)
  const tmp = await c.catalog.getTableDefinition('tmp')
  assert.deepStrictEqual(tmp, {
    name: { database: undefined, schema: 'pg_temp', name: 'tmp' },
    columns: [{ name: 'c', type: 'TEXT', nullable: false }],
    persistence: 'temporary',
  })
  const t = await c.catalog.getTableDefinition('t')
  assert.deepStrictEqual(t.name, { database: 'resolve', schema: 'public', name: 't' })
  assert.equal(t.persistence, 'permanent')
  // A definition read back serves an insert as it is.
  assert.equal(await c.insertRows(tmp, [['x']]), 1)
  assert.equal(await c.queryScalar('SELECT count(*) FROM tmp'), 1n)
  await rejectsHyper(
    () => c.catalog.createTable({ name: 'bad', columns: [{ name: 'a', type: SqlType.int() }], persistence: 'forever' }),
    '22023',
  )
  assert.equal(await c.catalog.hasTable('bad'), false)
})

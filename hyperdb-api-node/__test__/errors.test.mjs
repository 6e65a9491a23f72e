// Errors: every failure is a HyperError with a SQLSTATE code, and the
// connection survives statement errors.
import { test, describe, before } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import fs from 'node:fs'
import path from 'node:path'
import { setupHyper, rejectsHyper, drain, withTimeout, LONG_QUERY, makeTempDir, removeDir } from './helpers.mjs'
import {
  HyperProcess,
  Connection,
  GrpcConnection,
  Inserter,
  HyperError,
  ErrorCode,
  HyperTime,
  HyperTimestamp,
  HyperInterval,
  SqlType,
  dateOnly,
  numeric,
} from '../dist/index.mjs'

const ctx = setupHyper()
let conn

before(async () => {
  conn = await ctx.connect()
  await conn.executeCommand('CREATE TABLE nn (id INTEGER NOT NULL, label TEXT)')
})

/** The connection answers correctly (after an error). */
async function stillWorks(c = conn) {
  assert.equal(await c.queryScalar('SELECT $1::INTEGER + 1', [41]), 42)
  assert.equal(await c.queryScalar('SELECT 7'), 7)
}

/** A TCP port on 127.0.0.1 nothing listens on. */
async function closedPort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('HyperError', () => {
  test('is an Error with code, message, detail, hint, position, severity', async () => {
    const err = await rejectsHyper(() => conn.queryAll('SELEC 1'), '42601')
    assert.ok(err instanceof Error)
    assert.ok(err instanceof HyperError)
    assert.equal(err.name, 'HyperError')
    assert.equal(typeof err.message, 'string')
    assert.ok(err.message.length > 0)
    assert.match(err.message, /syntax error/)
    assert.equal(typeof err.stack, 'string')
    for (const field of ['code', 'message', 'detail', 'hint', 'position', 'severity']) {
      assert.ok(field in err, `HyperError has a ${field} field`)
    }
    assert.equal(typeof err.detail, 'string') // hyperd points at the error in the SQL
    assert.ok(err.hint === undefined || typeof err.hint === 'string')
    assert.equal(err.severity, 'ERROR')
    assert.equal(ErrorCode.SYNTAX_ERROR, '42601')
  })

  test('napi failures that carry no payload become XX000, argument ones 22023; other errors pass through', async () => {
    // The mapping every native call goes through (lib/errors.ts).
    const { toHyperError } = await import('../dist/errors.js')
    const napi = (code, message) => Object.assign(new Error(message), { code })
    const internal = toHyperError(napi('GenericFailure', 'Failed to convert rust `String` into napi `string`'))
    assert.ok(internal instanceof HyperError)
    assert.equal(internal.code, ErrorCode.INTERNAL_ERROR)
    assert.match(internal.message, /Failed to convert/)
    assert.equal(internal.cause.code, 'GenericFailure')
    assert.equal(toHyperError(napi('StringExpected', 'Expect type String')).code, '22023')
    const payload = napi('GenericFailure', JSON.stringify({ code: '54000', message: 'too large' }))
    assert.equal(toHyperError(payload).code, '54000')
    const mine = new TypeError('not native')
    assert.equal(toHyperError(mine), mine)
  })

  test('can be constructed and caught like any Error', () => {
    const e = new HyperError({ code: '22000', message: 'm', detail: 'd', hint: 'h', position: 3 })
    assert.ok(e instanceof Error)
    assert.deepStrictEqual([e.code, e.message, e.detail, e.hint, e.position], ['22000', 'm', 'd', 'h', 3])
  })
})

describe('statement errors', () => {
  test('syntax error: 42601 with position (query and executeCommand)', async () => {
    const sql = 'SELECT 1 FROM FROM'
    for (const run of [() => conn.queryAll(sql), () => conn.executeCommand(sql), () => drain(conn.queryColumns(sql))]) {
      const err = await rejectsHyper(run, '42601')
      assert.equal(typeof err.position, 'number')
      // 1-based position of the second FROM in the SQL as written.
      assert.equal(err.position, 15)
      assert.equal(sql.slice(err.position - 1), 'FROM')
      await stillWorks()
    }
    const first = await rejectsHyper(() => conn.queryScalar('SELEC 1'), '42601')
    assert.equal(first.position, 1)
    await stillWorks()
  })

  test('a NUL byte in the SQL: 22023 at its offset in the caller text, on every route', async () => {
    for (const [f, at] of [
      [() => conn.queryAll('SELECT 1\0'), 8],
      [() => conn.queryAll('SELECT 1\0', [], { rowMode: 'array' }), 8],
      [() => conn.queryAll('SELECT $1\0', [1]), 9],
      [() => conn.executeCommand('SELECT 1\0'), 8],
      [() => conn.queryArrowTable('SELECT 1\0'), 8],
    ]) {
      const e = await rejectsHyper(f, '22023')
      assert.ok(e.message.includes(`NUL byte at offset ${at}`), e.message)
    }
    await stillWorks()
  })

  test('missing table: 42P01', async () => {
    const err = await rejectsHyper(() => conn.queryAll('SELECT * FROM no_such_table'), '42P01')
    assert.match(err.message, /no_such_table/)
    assert.equal(err.code, ErrorCode.UNDEFINED_TABLE)
    await stillWorks()
    await rejectsHyper(() => conn.executeCommand('INSERT INTO no_such_table VALUES (1)'), '42P01')
    await rejectsHyper(() => drain(conn.queryArrow('SELECT * FROM no_such_table')), '42P01')
    await rejectsHyper(() => conn.queryAll('SELECT * FROM no_such_table WHERE $1::int = 1', [1]), '42P01')
    await stillWorks()
  })

  test('NOT NULL violation: 23502', async () => {
    await rejectsHyper(() => conn.executeCommand("INSERT INTO nn VALUES (NULL, 'x')"), '23502')
    await stillWorks()
    await rejectsHyper(() => conn.executeCommand('INSERT INTO nn VALUES ($1, $2)', [null, 'x']), '23502')
    await stillWorks()
    // Nothing was inserted.
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn'), 0n)
    assert.equal(await conn.executeCommand("INSERT INTO nn VALUES (1, 'ok')"), 1)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn'), 1n)
  })

  test('other server errors keep their SQLSTATE', async () => {
    await rejectsHyper(() => conn.queryScalar('SELECT 1/0'), '22012')
    await rejectsHyper(() => conn.queryScalar("SELECT CAST('x' AS INTEGER)"), '22P02')
    await rejectsHyper(() => conn.queryScalar('SELECT no_column FROM nn'), '42703')
    await stillWorks()
  })

  test('an error in the middle of a streamed result rejects the iteration', async () => {
    // The division fails only once g reaches 0, after rows have been produced.
    const sql = 'SELECT 100 / (200000 - g) AS v FROM generate_series(1, 300000) s(g)'
    let rows = 0
    const err = await rejectsHyper(async () => {
      for await (const _ of conn.query(sql)) rows++
    }, '22012')
    assert.ok(err instanceof HyperError)
    await stillWorks()
  })

  test('an error in the middle of a result rejects queryAll, after rows were made', async () => {
    const sql = 'SELECT 100 / (200000 - g) AS v FROM generate_series(1, 300000) s(g)'
    for (const rowMode of ['object', 'array']) {
      const err = await rejectsHyper(() => conn.queryAll(sql, undefined, { rowMode }), '22012')
      assert.ok(err instanceof HyperError)
      await stillWorks()
    }
  })
})

describe('arguments', () => {
  test('a misspelt option or an argument of the wrong type is a HyperError (22023), never ignored', async () => {
    const refused = {
      rowMode: () => conn.queryOne('SELECT 1 AS a', [], { rowMode: 'arrays' }),
      'rowMode (query)': () => drain(conn.query('SELECT 1 AS a', [], { rowMode: 'rows' })),
      bigint: () => conn.queryOne('SELECT 1::BIGINT AS a', [], { bigint: 'numbers' }),
      'bigint (queryColumns)': () => drain(conn.queryColumns('SELECT 1::BIGINT AS a', [], { bigint: 'int' })),
      signal: () => conn.queryAll('SELECT 1', [], { signal: {} }),
      'signal (queryArrowIpc)': () => drain(conn.queryArrowIpc('SELECT 1', [], { signal: 'abort' })),
      'sql not a string': () => conn.queryScalar(42),
      'sql not a string (executeCommand)': () => conn.executeCommand({ sql: 'SELECT 1' }),
      'HyperProcess parameter not a string': () => HyperProcess.start({ parameters: { log_config: 5 } }),
      'endpoint not a string': () => Connection.connect({ endpoint: 5432 }),
      'insertRows rows not iterable': () => conn.insertRows('nn', 5),
      'query option misspelt': () => conn.queryAll('SELECT 1', [], { rowmode: 'array' }),
      'query options not an object': () => conn.queryAll('SELECT 1', [], 'array'),
      'query options null': () => conn.queryAll('SELECT 1', [], null),
      'connect option misspelt': () => ctx.connect({ queryTimeoutMS: 100 }),
      'connect without options': () => Connection.connect(),
      'queryTimeoutMs NaN': () => ctx.connect({ queryTimeoutMs: NaN }),
      'queryTimeoutMs 0.5': () => ctx.connect({ queryTimeoutMs: 0.5 }),
      'queryTimeoutMs 2^32': () => ctx.connect({ queryTimeoutMs: 2 ** 32 }),
      'queryTimeoutMs -1': () => ctx.connect({ queryTimeoutMs: -1 }),
      'connectTimeoutMs Infinity': () => ctx.connect({ connectTimeoutMs: Infinity }),
      'HyperProcess option misspelt': () => HyperProcess.start({ transprot: 'tcp' }),
      'catalog option misspelt': () => conn.catalog.createSchema('s', { ifnotexists: true }),
      'inserter option misspelt': () => conn.insertRows('nn', [[1]], { batchrows: 10 }),
      'insertColumns option misspelt': () => conn.insertColumns('nn', { a: [1] }, { nul: {} }),
      'transaction without a function': () => conn.transaction(42),
      'hasTable(null)': () => conn.catalog.hasTable(null),
      'inserter(null)': () => conn.inserter(null),
      'numeric() of a number': async () => numeric(19.99),
      'HyperTime of a number': async () => new HyperTime(1.5),
      'HyperTimestamp of a number': async () => new HyperTimestamp(5),
      'HyperInterval micros of a number': async () => new HyperInterval(0, 0, 5),
      'HyperInterval of 1.5 months': async () => new HyperInterval(1.5, 0, 0n),
      'HyperInterval of 2^31 months': async () => new HyperInterval(2 ** 31, 0, 0n),
      'HyperInterval of NaN days': async () => new HyperInterval(0, NaN, 0n),
      'HyperInterval of days as a bigint': async () => new HyperInterval(0, 1n, 0n),
    }
    for (const [name, f] of Object.entries(refused)) {
      const err = await rejectsHyper(f, '22023', name)
      assert.match(err.message, /^invalid argument: /, name)
    }
    assert.deepEqual(await conn.queryOne('SELECT 1 AS a', [], { rowMode: 'array', bigint: 'number' }), [1])
    await stillWorks()
  })

  test("a refused argument is named, with what it takes, in the message (not napi's)", async () => {
    const endpoint = ctx.hyper.endpoint
    // Each case: the call, and what its message must say. Before, these
    // were napi's "Failed to convert JavaScript value ..." or named the
    // wrong thing, and the flags were read as truthy or as === true.
    const cases = [
      [() => conn.queryAll(5), /the SQL text is a string, not number/],
      [() => conn.executeCommand(undefined), /the SQL text is a string, not undefined/],
      [() => conn.describe(null), /the SQL text is a string, not null/],
      [() => drain(conn.queryArrowIpc(5)), /the SQL text is a string/],
      [() => conn.catalog.createDatabase({}), /the database path is a string, not object/],
      [() => conn.catalog.dropDatabase(5), /the database path is a string, not number/],
      [() => conn.catalog.attachDatabase(5, 'x'), /the database path is a string, not number/],
      [() => conn.catalog.attachDatabase(ctx.dbPath('x.hyper'), null), /the database alias is a string, not null/],
      [() => conn.catalog.detachDatabase(7), /the database alias is a string, not number/],
      [() => conn.catalog.getSchemaNames(5), /the database name is a string, not number/],
      [() => conn.catalog.createTable({ name: 'nn', columns: [] }, { ifNotExists: 'yes' }), /ifNotExists is a boolean/],
      [() => conn.catalog.dropTable('missing', { ifExists: 'yes' }), /ifExists is a boolean, not string/],
      [() => conn.catalog.createSchema('public', { ifNotExists: 'yes' }), /ifNotExists is a boolean/],
      [() => conn.catalog.createDatabase(ctx.dbPath('x.hyper'), { ifNotExists: 1 }), /ifNotExists is a boolean/],
      [() => conn.catalog.dropDatabase(ctx.dbPath('x.hyper'), { ifExists: 1 }), /ifExists is a boolean/],
      [() => HyperProcess.start({ hyperdPath: 5 }), /hyperdPath is a string, not number/],
      [() => HyperProcess.start({ grpc: 'yes' }), /grpc is a boolean, not string/],
      [() => HyperProcess.start({ logDir: [] }), /logDir is a string, not an array/],
      [() => Connection.connect({ endpoint, requireAuth: 'none' }), /requireAuth is an array of strings, not string/],
      [() => Connection.connect({ endpoint, requireAuth: [1] }), /requireAuth\[0\] is a string, not number/],
      [() => Connection.connect({ endpoint, createMode: 42 }), /createMode is a string, not number/],
      [() => Connection.connect({ endpoint, createMode: 'bogus' }), /createMode.*"bogus" is none of/],
      [() => Connection.connect({ endpoint, createMode: 'CREATE' }), /createMode.*"CREATE" is none of/],
      [() => Connection.connect({ endpoint, user: 5 }), /user is a string, not number/],
      [() => Connection.connect({ endpoint, connectTimeoutMs: '5' }), /connectTimeoutMs .*, not "5"/],
      [() => HyperProcess.start({ defaultDatabaseVersion: '2' }), /defaultDatabaseVersion .*, not "2"/],
      [() => GrpcConnection.connect({ endpoint: 5 }), /endpoint is a string, not number/],
      [() => GrpcConnection.connect({ endpoint: 'http://127.0.0.1:1', transferMode: 1 }), /transferMode is a string/],
      [async () => new HyperTimestamp(), /bigint \(1500000n is 1.5 s\), not undefined/],
      [async () => new HyperTimestamp(1n, 'yes'), /HyperTimestamp's tz is a boolean, not string/],
      [async () => HyperTimestamp.fromDate(new Date(0), 1), /HyperTimestamp's tz is a boolean, not number/],
      [() => conn.queryAll('SELECT 1', [], { rowMode: 'Array' }), /rowMode is 'object' or 'array', not "Array"/],
      [() => conn.queryAll('SELECT 1', [], { signal: 'abort' }), /the signal option is an AbortSignal, not string/],
      // An option a read has no use for: it did nothing.
      [() => conn.queryScalar('SELECT 1', [], { rowMode: 'object' }), /queryScalar has no option "rowMode"/],
      [() => drain(conn.queryColumns('SELECT 1', [], { rowMode: 'array' })), /queryColumns has no option "rowMode"/],
      [() => drain(conn.queryArrow('SELECT 1::BIGINT', [], { bigint: 'number' })), /queryArrow has no option "bigint"/],
      [() => conn.queryArrowTable('SELECT 1', [], { bigint: 'bigint' }), /queryArrowTable has no option "bigint"/],
      [() => drain(conn.queryArrowIpc('SELECT 1', [], { rowMode: 'array' })), /queryArrowIpc has no option "rowMode"/],
      [() => Connection.connect({ endpoint, createMode: 'create' }), /createMode.*given without a database/],
      // A misspelt key of a table definition, a column or a name: the
      // table was made nullable, permanent or in public.
      [
        () => conn.catalog.createTable({ name: 'k1', columns: [{ name: 'a', type: 'INT', nullble: false }] }),
        /column 0 of a table definition has no key "nullble" \(it takes name, type, nullable, collation\)/,
      ],
      [
        () => conn.catalog.createTable({ name: 'k2', columns: [{ name: 'a', type: 'INT' }], persistance: 'temporary' }),
        /a table definition has no key "persistance"/,
      ],
      [
        () =>
          conn.catalog.createTable({ name: { schemaa: 'other', name: 'k3' }, columns: [{ name: 'a', type: 'INT' }] }),
        /a table name has no key "schemaa" \(it takes database, schema, name\)/,
      ],
      [
        () => conn.inserter({ name: 'nn', columns: [{ name: 'a', type: 'INT', nulable: true }] }),
        /has no key "nulable"/,
      ],
      [() => conn.catalog.hasTable({ nmae: 'nn' }), /a table name is a string or \{ name, schema\?, database\? \}/],
      [() => conn.catalog.dropTable({ name: 'nn', shema: 'public' }), /a table name has no key "shema"/],
      [async () => dateOnly('1900-02-29'), /invalid DATE "1900-02-29": no such day in the calendar/],
      [async () => dateOnly('29.02.1900'), /expected YYYY-MM-DD/],
      [async () => SqlType.varchar('10'), /not a type length: "10"/],
    ]
    for (const [f, message] of cases) {
      const err = await rejectsHyper(f, '22023', String(message))
      assert.match(err.message, message)
      assert.doesNotMatch(err.message, /Failed to convert|Native[A-Z]|rust type/, String(message))
    }
    // A flag given as a boolean still works, and nothing above was made.
    for (const t of ['k1', 'k2', 'k3']) assert.equal(await conn.catalog.hasTable(t), false, t)
    assert.equal(await conn.catalog.hasSchema('other'), false)
    await conn.catalog.createSchema('public', { ifNotExists: true })
    assert.equal(await conn.catalog.hasTable('missing'), false)
    assert.equal(new HyperTimestamp(1n, true).tz, true)
    await stillWorks()
  })

  test('null or a malformed object where an object goes is a HyperError (22023) naming it, never a TypeError', async () => {
    // Each threw a TypeError ("Cannot read properties of null", "rows is
    // not iterable", "Cannot convert undefined or null to object").
    const def = {
      name: 'nn',
      columns: [
        { name: 'id', type: 'INTEGER', nullable: false },
        { name: 'label', type: 'TEXT' },
      ],
    }
    const rows = await conn.queryScalar('SELECT count(*) FROM nn')
    const withInserter = async (f) => {
      const ins = await conn.inserter('nn')
      try {
        await f(ins)
      } finally {
        await ins.cancel()
      }
    }
    const refused = {
      'query options null': [
        () => drain(conn.query('SELECT 1', [], null)),
        /the options of a query are an object, not null/,
      ],
      'queryScalar options null': [
        () => conn.queryScalar('SELECT 1', [], null),
        /the options of queryScalar are an object, not null/,
      ],
      'createTable without columns': [() => conn.catalog.createTable({ name: 'x' }), /columns are an array/],
      'createTable(null)': [() => conn.catalog.createTable(null), /table definition is .*, not null/],
      'createTable column null': [
        () => conn.catalog.createTable({ name: 'x', columns: [null] }),
        /column 0 of a table definition is .*, not null/,
      ],
      'createTable column without a type': [
        () => conn.catalog.createTable({ name: 'x', columns: [{ name: 'a' }] }),
        /column 0's type is a string, not undefined/,
      ],
      'createTable nullable not a boolean': [
        () => conn.catalog.createTable({ name: 'x', columns: [{ name: 'a', type: 'INT', nullable: 'no' }] }),
        /column 0's nullable is a boolean, not string/,
      ],
      'insertColumns columns null': [() => conn.insertColumns('nn', null), /insertColumns: columns is .*, not null/],
      'insertColumns nulls null': [
        () => conn.insertColumns('nn', { id: [1], label: ['a'] }, { nulls: null }),
        /insertColumns: nulls is .*, not null/,
      ],
      'insertColumns nulls of a column null': [
        () => conn.insertColumns('nn', { id: [1], label: ['a'] }, { nulls: { label: null } }),
        /nulls of `label`/,
      ],
      'insertRows definition with columns null': [
        () => conn.insertRows({ name: 'nn', columns: null }, [[1, 'a']]),
        /columns are an array/,
      ],
      'new Inserter(conn, null)': [async () => new Inserter(conn, null), /table definition is .*, not null/],
      'new Inserter(null, def)': [async () => new Inserter(null, def), /Connection, not null/],
      'Inserter.open(null, name)': [() => Inserter.open(null, 'nn'), /Connection, not null/],
      'addRows(null)': [() => withInserter((ins) => ins.addRows(null)), /rows are an iterable of rows, not null/],
      'addRows(5)': [() => withInserter((ins) => ins.addRows(5)), /rows are an iterable of rows, not number/],
      'HyperProcess parameters null': [
        () => HyperProcess.start({ parameters: null }),
        /parameters is an object of strings.*, not null/,
      ],
      'HyperProcess parameters an array': [
        () => HyperProcess.start({ parameters: [['log_config', '']] }),
        /parameters is .*, not an array/,
      ],
      'connect settings null': [
        () => Connection.connect({ endpoint: ctx.hyper.endpoint, settings: null }),
        /settings is an object of strings.*, not null/,
      ],
      'connect setting not a string': [
        () => Connection.connect({ endpoint: ctx.hyper.endpoint, settings: { extra_float_digits: 2 } }),
        /settings\.extra_float_digits is a string, not number/,
      ],
      'GrpcConnection settings null': [
        () => GrpcConnection.connect({ endpoint: 'http://127.0.0.1:1', settings: null }),
        /settings is an object of strings.*, not null/,
      ],
    }
    for (const [name, [f, message]] of Object.entries(refused)) {
      const err = await rejectsHyper(f, ErrorCode.INVALID_PARAMETER_VALUE, name)
      assert.match(err.message, message, name)
    }
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn'), rows, 'nothing stored')
    await stillWorks()
  })
})

describe('use after close', () => {
  test('every method rejects with 08003', async () => {
    const c = await ctx.connect()
    const catalog = c.catalog // taken while open
    await stillWorks(c)
    await c.close()
    assert.equal(c.isClosed, true)
    const calls = {
      executeCommand: () => c.executeCommand('SELECT 1'),
      'executeCommand with params': () => c.executeCommand('SELECT $1', [1]),
      query: () => drain(c.query('SELECT 1')),
      queryChunks: () => drain(c.queryChunks('SELECT 1')),
      queryAll: () => c.queryAll('SELECT 1'),
      queryOne: () => c.queryOne('SELECT 1'),
      queryScalar: () => c.queryScalar('SELECT 1'),
      queryColumns: () => drain(c.queryColumns('SELECT 1')),
      describe: () => c.describe('SELECT 1'),
      queryArrowIpc: () => drain(c.queryArrowIpc('SELECT 1')),
      queryArrow: () => drain(c.queryArrow('SELECT 1')),
      queryArrowTable: () => c.queryArrowTable('SELECT 1'),
      transaction: () => c.transaction(async () => 1),
      cancel: () => c.cancel(),
      // The getter may throw at once; either way the caller gets 08003.
      'catalog getter': async () => c.catalog.hasTable('nn'),
    }
    for (const [name, call] of Object.entries(calls)) {
      const err = await rejectsHyper(call, '08003', name)
      assert.equal(err.code, ErrorCode.CONNECTION_CLOSED, name)
    }
    // close() again is fine.
    await c.close()
    // A Catalog taken before close() also reports 08003 (today: 08006).
    await rejectsHyper(() => catalog.hasTable('nn'), '08003', 'catalog taken before close')
    await rejectsHyper(() => catalog.getTableNames(), '08003', 'catalog taken before close')
  })

  test('cancel() ends a statement that close() waits for', async () => {
    const c = await ctx.connect()
    const long = c.queryScalar(LONG_QUERY)
    long.catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const closing = c.close()
    await c.cancel()
    await rejectsHyper(() => long, '57014')
    await withTimeout(closing, 10_000, 'close() after cancel()')
    await rejectsHyper(() => c.cancel(), '08003', 'cancel() once closed')
  })

  test('a second close() resolves only when the first has closed', async () => {
    const c = await ctx.connect()
    let done = false
    const long = c.queryScalar('SELECT count(*) FROM generate_series(1, 30000000)').then(() => {
      done = true
    })
    const first = c.close()
    await c.close()
    assert.equal(done, true, 'the second close() resolved before the call queued ahead of the first ended')
    await first
    await long
  })

  test('close() ends an inserter that was neither executed nor cancelled, storing nothing (08003)', async () => {
    const dbPath = ctx.dbPath('close-inserter.hyper')
    const c = await ctx.connect({ database: dbPath, createMode: 'createAndReplace' })
    await c.executeCommand('CREATE TABLE t (i INTEGER NOT NULL)')
    const ins = await c.inserter('t')
    for (let k = 0; k < 100_000; k++) ins.addRow([k])
    assert.throws(
      () => ins.addRow([null]),
      (e) => e.code === '23502',
    )
    await withTimeout(c.close(), 10_000, 'close() with an open inserter')
    // From the first row after close(), not only once a batch would go.
    assert.throws(
      () => ins.addRow([1]),
      (e) => e.code === '08003',
    )
    await rejectsHyper(() => ins.execute(), '08003')
    const again = await ctx.connect({ database: dbPath, createMode: 'doNotCreate' })
    assert.equal(await again.queryScalar('SELECT count(*) FROM t'), 0n)
  })

  test('calls made before close() still complete (10 rounds)', async () => {
    // "Closes the connection after the calls queued before it". Today the
    // queued calls sometimes reject with 08006 "the connection was closed".
    const failures = []
    for (let round = 0; round < 10; round++) {
      const c = await ctx.connect()
      const pending = [
        c.queryScalar('SELECT 42'),
        c.executeCommand('SELECT 1'),
        c.queryAll('SELECT $1::INTEGER AS a', [3]),
      ]
      const closing = c.close()
      const results = await Promise.allSettled(pending)
      await closing
      for (const r of results) {
        if (r.status === 'rejected') failures.push(`round ${round}: ${r.reason.code} ${r.reason.message}`)
      }
      if (results.every((r) => r.status === 'fulfilled')) {
        assert.deepStrictEqual(
          results.map((r) => r.value),
          [42, 1, [{ a: 3 }]],
        )
      }
      await rejectsHyper(() => c.queryScalar('SELECT 1'), '08003')
    }
    assert.deepStrictEqual(failures, [], 'calls queued before close() failed')
  })
})

describe('connection lost', () => {
  test('killing hyperd makes the next query reject with 08xxx', async () => {
    const own = await HyperProcess.start()
    const dir = makeTempDir()
    try {
      const c = await Connection.connect({
        endpoint: own.endpoint,
        database: path.join(dir, 'lost.hyper'),
        createMode: 'create',
      })
      await stillWorks(c)
      process.kill(own.pid, 'SIGKILL')
      const err = await rejectsHyper(() => withTimeout(c.queryScalar('SELECT 1'), 20_000, 'query after kill'), /^08/)
      console.log(`# after SIGKILL: ${err.code} ${err.message}`)
      // And it stays unusable, still with an 08xxx code.
      await rejectsHyper(() => c.executeCommand('SELECT 1'), /^08/)
      await rejectsHyper(() => drain(c.queryArrow('SELECT 1')), /^08/)
      await c.close().catch(() => {})
    } finally {
      await own.close().catch(() => {})
      removeDir(dir)
    }
  })
})

describe('silent server', () => {
  /**
   * Runs `body` with a connection to a hyperd of its own and `stop(bool)`,
   * which SIGSTOPs or SIGCONTs that hyperd; it is resumed and closed after.
   */
  async function withStoppableHyperd(body) {
    const own = await HyperProcess.start()
    const dir = makeTempDir()
    let stopped = false
    const stop = (yes) => {
      process.kill(own.pid, yes ? 'SIGSTOP' : 'SIGCONT')
      stopped = yes
    }
    try {
      const c = await Connection.connect({
        endpoint: own.endpoint,
        database: path.join(dir, 's.hyper'),
        createMode: 'create',
      })
      await body(c, stop)
    } finally {
      if (stopped) process.kill(own.pid, 'SIGCONT')
      await own.close().catch(() => {})
      removeDir(dir)
    }
  }

  test('close() after a query aborted on a stopped hyperd resolves (the connection is given up)', async () => {
    await withStoppableHyperd(async (c, stop) => {
      for (const read of [
        // Aborted before its first rows, and after them.
        (signal) => c.queryScalar(LONG_QUERY, [], { signal }),
        async (signal) => {
          for await (const b of c.queryArrow('SELECT i::BIGINT FROM generate_series(1, 1000000000) g(i)', [], {
            signal,
          })) {
            assert.ok(b.numRows > 0)
          }
        },
      ]) {
        const abort = new AbortController()
        const reading = read(abort.signal)
        await new Promise((resolve) => setTimeout(resolve, 300))
        stop(true)
        abort.abort()
        await rejectsHyper(() => withTimeout(reading, 5_000, 'the aborted read'), '57014')
        stop(false)
        await stillWorks(c)
      }
      // Once more, the server left stopped: the cancel sent for the
      // aborted read goes unanswered, 5 s later the connection is given
      // up, and close() resolves. Before, it waited for ever.
      const abort = new AbortController()
      const reading = c.queryScalar(LONG_QUERY, [], { signal: abort.signal })
      await new Promise((resolve) => setTimeout(resolve, 300))
      stop(true)
      abort.abort()
      await rejectsHyper(() => withTimeout(reading, 5_000, 'the aborted read'), '57014')
      await withTimeout(c.close(), 60_000, 'close() on a stopped hyperd')
    })
  })

  test('a read cancelled by conn.cancel() on a stopped hyperd rejects with HYT00 after the grace; close() resolves', async () => {
    await withStoppableHyperd(async (c, stop) => {
      const reading = (async () => {
        for await (const b of c.queryArrow('SELECT i::BIGINT FROM generate_series(1, 1000000000) g(i)')) {
          assert.ok(b.numRows > 0)
        }
      })()
      await new Promise((resolve) => setTimeout(resolve, 300))
      stop(true)
      const started = Date.now()
      await c.cancel()
      // Before, the loop waited for its next batch for ever.
      const err = await rejectsHyper(() => withTimeout(reading, 60_000, 'the cancelled read'), 'HYT00')
      assert.match(err.message, /cancel request/)
      assert.ok(Date.now() - started >= 4_000, 'the server was given the grace')
      await withTimeout(c.close(), 10_000, 'close() on a stopped hyperd')
    })
  })

  test('an executeCommand aborted on a stopped hyperd rejects with HYT00 after the grace; close() resolves', async () => {
    await withStoppableHyperd(async (c, stop) => {
      const abort = new AbortController()
      // A command settles with its outcome, not at once: before, that
      // outcome never came, nor did close() behind it.
      const running = c.executeCommand(`CREATE TEMPORARY TABLE t AS ${LONG_QUERY}`, [], { signal: abort.signal })
      await new Promise((resolve) => setTimeout(resolve, 300))
      stop(true)
      const started = Date.now()
      abort.abort()
      const err = await rejectsHyper(() => withTimeout(running, 60_000, 'the aborted command'), 'HYT00')
      assert.match(err.message, /cancel request/)
      assert.ok(Date.now() - started >= 4_000, 'the server was given the grace')
      await rejectsHyper(() => c.queryScalar('SELECT 1'), '08006')
      await withTimeout(c.close(), 10_000, 'close() on a stopped hyperd')
    })
  })
})

describe('query timeout', () => {
  test('queryTimeoutMs cancels a long statement; the connection works afterwards', async () => {
    const c = await ctx.connect({ queryTimeoutMs: 200 })
    await stillWorks(c)
    const t0 = performance.now()
    // HYT00, told apart from a caller's cancel (57014), and the message says
    // that a timeout expired (not the server's "canceled by user").
    const err = await rejectsHyper(() => withTimeout(c.queryScalar(LONG_QUERY), 30_000, 'timed-out query'), 'HYT00')
    assert.match(err.message, /^query timeout \(200ms\) expired, so the statement was cancelled/)
    const elapsed = performance.now() - t0
    console.log(`# queryTimeoutMs: 200 -> ${err.code} (${err.message}) after ${elapsed.toFixed(0)} ms`)
    assert.ok(elapsed < 10_000, `rejected after ${elapsed} ms`)
    await stillWorks(c)
    // Same for executeCommand and for the row route (a query with parameters).
    await rejectsHyper(
      () => withTimeout(c.executeCommand(`CREATE TEMP TABLE slow AS ${LONG_QUERY}`), 30_000, 'command'),
      'HYT00',
    )
    await stillWorks(c)
    await rejectsHyper(
      () => withTimeout(c.queryAll(`${LONG_QUERY} WHERE $1::int = 1`, [1]), 30_000, 'param query'),
      'HYT00',
    )
    await stillWorks(c)
    // Short statements are not affected.
    assert.equal(await c.queryScalar('SELECT count(*) FROM generate_series(1, 1000)'), 1000n)
  })
})

describe('connecting', () => {
  test('a closed port rejects with 08xxx', async () => {
    const port = await closedPort()
    await rejectsHyper(() => Connection.connect({ endpoint: `tab.tcp://127.0.0.1:${port}` }), /^08/)
  })

  test('a bad createMode rejects with a HyperError (22023)', async () => {
    await rejectsHyper(
      () =>
        Connection.connect({
          endpoint: ctx.hyper.endpoint,
          database: ctx.dbPath('bad-mode.hyper'),
          createMode: 'bogus',
        }),
      '22023',
    )
  })

  test('doNotCreate on a missing database file rejects with a HyperError', async () => {
    const missing = ctx.dbPath('does-not-exist.hyper')
    for (const createMode of ['doNotCreate', undefined]) {
      const err = await rejectsHyper(() =>
        Connection.connect({ endpoint: ctx.hyper.endpoint, database: missing, createMode }),
      )
      assert.match(err.code, /^[0-9A-Z]{5}$/)
      assert.match(err.message, /does-not-exist\.hyper|does not exist/)
    }
    // In a directory that does not exist, even with create.
    await rejectsHyper(() =>
      Connection.connect({
        endpoint: ctx.hyper.endpoint,
        database: ctx.dbPath('no/such/dir/x.hyper'),
        createMode: 'create',
      }),
    )
    // The codes the README lists for a database that exists and a file that is none.
    const made = ctx.dbPath('made-once.hyper')
    await (await Connection.connect({ endpoint: ctx.hyper.endpoint, database: made, createMode: 'create' })).close()
    await rejectsHyper(
      () => Connection.connect({ endpoint: ctx.hyper.endpoint, database: made, createMode: 'create' }),
      ErrorCode.DUPLICATE_DATABASE,
    )
    const notHyper = ctx.dbPath('not-a-database.hyper')
    fs.writeFileSync(notHyper, 'plain text, no database')
    await rejectsHyper(
      () => Connection.connect({ endpoint: ctx.hyper.endpoint, database: notHyper }),
      ErrorCode.WRONG_OBJECT_TYPE,
    )
  })

  test('a malformed endpoint rejects with a HyperError', async () => {
    await rejectsHyper(() => Connection.connect({ endpoint: 'not an endpoint' }))
    // A URL of another form is refused as such (22023), not tried as a
    // host name that cannot be resolved (08006, as if hyperd were down).
    for (const endpoint of ['postgres://localhost:7483', 'http://localhost:7483', 'tcp://me@localhost:7483']) {
      const e = await rejectsHyper(() => Connection.connect({ endpoint }), '22023')
      assert.ok(e.message.includes(endpoint), e.message)
    }
  })

  test('requireAuth refuses a server that asks for another method, before anything is sent', async () => {
    await ctx.ready()
    // The test server trusts local clients (no authentication at all).
    const e = await rejectsHyper(
      () => Connection.connect({ endpoint: ctx.hyper.endpoint, requireAuth: ['scram-sha-256'] }),
      '28000',
    )
    assert.match(e.message, /trust|authentication/i)
    const ok = await Connection.connect({ endpoint: ctx.hyper.endpoint, requireAuth: ['none', 'scram-sha-256'] })
    assert.equal(await ok.queryScalar('SELECT 1'), 1)
    await ok.close()
    await rejectsHyper(() => Connection.connect({ endpoint: ctx.hyper.endpoint, requireAuth: ['scram'] }), '22023')
  })

  test("sessions start with Tableau's defaults; settings of one's own win; an unknown one rejects", async () => {
    await ctx.ready()
    const floatText = 'SELECT (0.1::DOUBLE PRECISION + 0.2::DOUBLE PRECISION)::TEXT'
    const yearText = "SELECT '01/02/50'::DATE::TEXT"
    assert.equal(await conn.queryScalar(floatText), '0.30000000000000004')
    assert.equal(await conn.queryScalar(yearText), '1950-01-02')
    // hyperd started by HyperProcess parses dates strictly.
    await rejectsHyper(() => conn.queryScalar("SELECT '-1-01-01'::DATE"), '22P02')
    await stillWorks()
    const own = await Connection.connect({
      endpoint: ctx.hyper.endpoint,
      settings: { two_digit_year_threshold: '70', extra_float_digits: '0' },
    })
    assert.equal(await own.queryScalar(floatText), '0.3')
    assert.equal(await own.queryScalar(yearText), '2050-01-02')
    await own.close()
    await rejectsHyper(() => Connection.connect({ endpoint: ctx.hyper.endpoint, settings: { no_such_setting: '1' } }))
    // The client's own setting (it reads every result as HyperBinary).
    await rejectsHyper(
      () => Connection.connect({ endpoint: ctx.hyper.endpoint, settings: { result_format_code: 'text' } }),
      '22023',
      /result_format_code/,
    )
  })
})

// HyperProcess: starting hyperd over IPC (the default) and TCP (with a
// password), failures, closing, and not blocking the event loop.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import { setupHyper, rejectsHyper, makeTempDir, removeDir } from './helpers.mjs'
import { HyperProcess, Connection, HyperError, ErrorCode } from '../dist/index.mjs'

const ctx = setupHyper()

const isAlive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    if (e.code === 'ESRCH') return false
    throw e
  }
}

describe('the shared hyperd (ipc, the default)', () => {
  before(() => ctx.ready())

  // Issue 18, defect 5: the default server is not open to every local account.
  test('endpoint, pid, grpcEndpoint, password', async () => {
    assert.match(ctx.hyper.endpoint, /^unix:\//)
    assert.equal(typeof ctx.hyper.pid, 'number')
    assert.ok(isAlive(ctx.hyper.pid))
    assert.equal(ctx.hyper.grpcEndpoint, null)
    assert.equal(ctx.hyper.password, undefined)
    const conn = await ctx.connect()
    assert.equal(await conn.queryScalar('SELECT $1::INTEGER + 1', [1]), 2)
  })

  test('the socket is in a directory only this user can enter', () => {
    const socket = ctx.hyper.endpoint.slice('unix:'.length)
    assert.ok(fs.statSync(socket).isSocket(), socket)
    const dir = fs.statSync(path.dirname(socket))
    assert.equal(dir.mode & 0o7777, 0o700, `mode ${(dir.mode & 0o7777).toString(8)}`)
    assert.equal(dir.uid, process.getuid())
  })
})

describe('transport tcp', () => {
  let hyper
  let dir

  before(async () => {
    dir = makeTempDir()
    hyper = await HyperProcess.start({ transport: 'tcp' })
  })

  after(async () => {
    await hyper?.close()
    removeDir(dir)
  })

  test('listens on loopback and requires its generated password', async () => {
    assert.match(hyper.endpoint, /^tab\.tcp:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(typeof hyper.password, 'string')
    assert.ok(hyper.password.length >= 32, `password of ${hyper.password.length} characters`)
    const err = await rejectsHyper(() => Connection.connect({ endpoint: hyper.endpoint }), '28000')
    assert.match(err.message, /password/)
    const wrong = await rejectsHyper(() => Connection.connect({ endpoint: hyper.endpoint, password: 'guess' }), '42501')
    assert.equal(wrong.code, ErrorCode.INSUFFICIENT_PRIVILEGE)
    const conn = await Connection.connect({
      endpoint: hyper.endpoint,
      password: hyper.password,
      database: path.join(dir, 'tcp.hyper'),
      createMode: 'create',
    })
    await conn.executeCommand('CREATE TABLE t (a INTEGER)')
    assert.equal(await conn.executeCommand('INSERT INTO t SELECT g FROM generate_series(1, 100) s(g)'), 100)
    assert.equal(await conn.queryScalar('SELECT sum(a) FROM t'), 5050n)
    await conn.close()
  })

  test('a given password is the one required', async () => {
    const own = await HyperProcess.start({ transport: 'tcp', password: 'given pw' })
    try {
      assert.equal(own.password, 'given pw')
      const conn = await Connection.connect({ endpoint: own.endpoint, password: 'given pw' })
      assert.equal(await conn.queryScalar('SELECT 9'), 9)
      await conn.close()
    } finally {
      await own.close()
    }
  })
})

describe('transport ipc', () => {
  let hyper
  let dir

  before(async () => {
    dir = makeTempDir()
    hyper = await HyperProcess.start({ transport: 'ipc' })
  })

  after(async () => {
    await hyper?.close()
    removeDir(dir)
  })

  test('connect and query over it', async () => {
    const conn = await Connection.connect({
      endpoint: hyper.endpoint,
      database: path.join(dir, 'ipc.hyper'),
      createMode: 'create',
    })
    await conn.executeCommand('CREATE TABLE t (a INTEGER)')
    assert.equal(await conn.executeCommand('INSERT INTO t SELECT g FROM generate_series(1, 1000) s(g)'), 1000)
    assert.equal(await conn.queryScalar('SELECT sum(a) FROM t'), 500500n)
    const table = await conn.queryArrowTable('SELECT a FROM t')
    assert.equal(table.numRows, 1000)
    await conn.close()
  })

  test('the endpoint is a Unix socket endpoint', async () => {
    assert.ok(hyper.endpoint.startsWith('unix:/'), `endpoint ${hyper.endpoint}`)
  })

  test('close() stops hyperd; close() twice is fine', async () => {
    const pid = hyper.pid
    assert.ok(isAlive(pid))
    await hyper.close()
    assert.equal(isAlive(pid), false)
    await hyper.close()
  })
})

describe('failures', () => {
  test('a bad hyperdPath rejects with a HyperError (58000)', async () => {
    const dir = makeTempDir()
    try {
      const notExecutable = path.join(dir, 'hyperd')
      fs.writeFileSync(notExecutable, 'not a program')
      for (const hyperdPath of ['/nonexistent/dir/hyperd', dir, notExecutable]) {
        const err = await rejectsHyper(() => HyperProcess.start({ hyperdPath }), '58000', hyperdPath)
        assert.equal(err.code, ErrorCode.SYSTEM_ERROR)
        assert.ok(err instanceof HyperError)
        assert.match(err.message, /hyperd/)
      }
      // An executable that exits at once.
      await rejectsHyper(() => HyperProcess.start({ hyperdPath: '/bin/false', startTimeoutMs: 10_000 }), '58000')
      // An empty path names nothing (it was taken as no path, and hyperd found elsewhere).
      const empty = await rejectsHyper(() => HyperProcess.start({ hyperdPath: '' }), '22023')
      assert.match(empty.message, /hyperdPath/)
    } finally {
      removeDir(dir)
    }
  })

  test('a defaultDatabaseVersion that is no whole number from 0 to 2^32 - 1 rejects with 22023', async () => {
    for (const defaultDatabaseVersion of [1.5, NaN, -1, 2 ** 32 + 2, '4']) {
      await rejectsHyper(() => HyperProcess.start({ defaultDatabaseVersion }), '22023', String(defaultDatabaseVersion))
    }
  })

  test('a bad transport rejects with 22023', async () => {
    await rejectsHyper(() => HyperProcess.start({ transport: 'udp' }), '22023')
  })
})

describe('lifecycle', () => {
  test('close() twice is fine; hyperd is gone after close()', async () => {
    const hyper = await HyperProcess.start()
    const pid = hyper.pid
    assert.ok(isAlive(pid))
    const conn = await Connection.connect({ endpoint: hyper.endpoint })
    assert.equal(await conn.queryScalar('SELECT 3'), 3)
    await conn.close()
    await hyper.close()
    assert.equal(isAlive(pid), false)
    await hyper.close()
    await Promise.all([hyper.close(), hyper.close()])
  })

  test('an open connection keeps its HyperProcess from being collected and stopped', async () => {
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc')
    const collect = async () => {
      for (let i = 0; i < 3; i++) {
        gc()
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
    // Only the connection is kept: collected, the process stopped hyperd
    // under it (08006 at the next call).
    let pid
    const open = async () => {
      const hyper = await HyperProcess.start()
      pid = hyper.pid
      return Connection.connect({ endpoint: hyper.endpoint })
    }
    const conn = await open()
    await collect()
    assert.equal(await conn.queryScalar('SELECT 2'), 2)
    assert.ok(isAlive(pid))
    // Closed, it holds nothing: an unreachable process is stopped as before.
    await conn.close()
    const deadline = Date.now() + 20_000
    while (isAlive(pid) && Date.now() < deadline) await collect()
    assert.equal(isAlive(pid), false, 'hyperd outlived its unreachable HyperProcess')
  })

  test('a second close() resolves only once hyperd has stopped', async () => {
    const hyper = await HyperProcess.start()
    const pid = hyper.pid
    const first = hyper.close()
    await hyper.close()
    assert.equal(isAlive(pid), false, 'hyperd still ran when the second close() resolved')
    await first
  })

  test('the event loop keeps turning while hyperd starts and stops', async () => {
    let ticks = 0
    const timer = setInterval(() => ticks++, 10)
    try {
      const t0 = performance.now()
      const hyper = await HyperProcess.start()
      const startMs = performance.now() - t0
      const startTicks = ticks
      console.log(`# HyperProcess.start(): ${startMs.toFixed(0)} ms, ${startTicks} ticks of a 10 ms interval`)
      // A few ticks (hyperd starts in ~40-80 ms here; a blocked loop would give 0).
      const wanted = startMs >= 40 ? 2 : 1
      assert.ok(startTicks >= wanted, `only ${startTicks} ticks during a ${startMs.toFixed(0)} ms start`)
      const conn = await Connection.connect({ endpoint: hyper.endpoint })
      assert.equal(await conn.queryScalar('SELECT 4'), 4)
      await conn.close()
      ticks = 0
      const t1 = performance.now()
      await hyper.close()
      console.log(`# HyperProcess.close(): ${(performance.now() - t1).toFixed(0)} ms, ${ticks} ticks`)
    } finally {
      clearInterval(timer)
    }
  })
})

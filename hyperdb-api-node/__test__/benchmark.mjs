// The Node benchmark: every insert and read path of the package on the Rust
// suite's schema and workloads, against the Rust figure of the same path.
//
//   node __test__/benchmark.mjs [ROWS]        (default 1M; `make bench` runs 10M)
//
// Environment: BENCH_ONLY (`insert` or `query`), BENCH_REPEAT (runs after a warm-up, default 5), BENCH_WORKERS
// (connections of the "async xN" variants, default 2), HYPERD_PATH,
// BENCH_RUST_REFERENCE (the `node_reference` example's binary: the reads'
// Rust paths, run in turn with them; `make bench-node` builds and passes
// it), BENCH_RUST_JSON (the Rust suite's artifact, for the inserts and for
// reads without a reference; default test_results/benchmark_suite.json),
// BENCH_OUT (artifact path without extension; default
// test_results/benchmark_suite_node).
//
// Run it with `node --expose-gc` (as `make bench` does) for per-workload
// peak RSS figures. The eager style (`queryAll`) runs after every streamed read.
//
// Every workload checks its row count and a checksum against the server
// and exits non-zero on a mismatch. Data is generated before any clock
// starts: by the server for reads, into TypedArrays (and an apache-arrow
// Table over them) for inserts; `addRow` copies each row out of them into
// one reused array, as a producer holding its values would. Peak RSS and the p99 event-loop delay are recorded per
// workload. Writes BENCH_OUT.md and BENCH_OUT.json.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { HyperProcess, Connection } from '../dist/index.mjs'
import { RustReference } from './rust-reference.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, '..', '..')
const ROWS = Number(process.argv[2] ?? 1_000_000)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 5)
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2)
const RUST_JSON = process.env.BENCH_RUST_JSON ?? join(repo, 'test_results', 'benchmark_suite.json')
const OUT = process.env.BENCH_OUT ?? join(repo, 'test_results', 'benchmark_suite_node')
const BYTES_PER_ROW = 24
/**
 * The `node_reference` example's binary: the Rust paths the reads compare
 * with, run in turn with them on this server (else the artifact's figures).
 */
const REFERENCE = process.env.BENCH_RUST_REFERENCE
/** `insert` or `query` runs only those workloads. */
const ONLY = process.env.BENCH_ONLY
const TS_BASE = 1_700_000_000_000n

const QUERIES = {
  full_scan: (t) => `SELECT id, sensor_id, value, timestamp FROM ${t}`,
  filtered: (t) => `SELECT id, sensor_id, value, timestamp FROM ${t} WHERE sensor_id = 5`,
  aggregation: (t) => `SELECT sensor_id, count(*) AS n, sum(id::BIGINT) AS ids FROM ${t} GROUP BY sensor_id`,
}

/** What a read returns, reduced so that every path is checked the same way. */
class Check {
  rows = 0
  sum = 0n
  add(firstColumn) {
    this.rows += 1
    this.sum += BigInt(firstColumn)
  }
}

/** The read styles: each reads `sql` and returns a Check of (rows, sum of column 0). */
const STYLES = [
  {
    variant: 'query',
    flavor: 'streaming, row objects',
    rust: ['execute_query', 'async'],
    run: async (conn, sql) => {
      const c = new Check()
      let key
      let s = 0
      for await (const r of conn.query(sql)) {
        key ??= Object.keys(r)[0]
        s += Number(r[key])
        c.rows++
      }
      c.sum = BigInt(s)
      return c
    },
  },
  {
    variant: 'query',
    flavor: 'streaming, row arrays',
    rust: ['execute_query', 'async'],
    run: async (conn, sql) => {
      const c = new Check()
      let s = 0
      for await (const r of conn.query(sql, [], { rowMode: 'array' })) {
        s += Number(r[0])
        c.rows++
      }
      c.sum = BigInt(s)
      return c
    },
  },
  {
    variant: 'queryChunks',
    flavor: 'chunked, row arrays',
    rust: ['execute_query', 'async'],
    run: async (conn, sql) => {
      const c = new Check()
      let s = 0
      for await (const rows of conn.queryChunks(sql, [], { rowMode: 'array' })) {
        for (let i = 0; i < rows.length; i++) s += Number(rows[i][0])
        c.rows += rows.length
      }
      c.sum = BigInt(s)
      return c
    },
  },
  {
    variant: 'queryColumns',
    flavor: 'columns',
    rust: ['query_arrow', 'async'],
    run: async (conn, sql) => {
      const c = new Check()
      let s = 0
      for await (const chunk of conn.queryColumns(sql)) {
        const v = chunk.columns[0].values
        for (let i = 0; i < v.length; i++) s += Number(v[i])
        c.rows += chunk.numRows
      }
      c.sum = BigInt(s)
      return c
    },
  },
  {
    variant: 'queryArrow',
    flavor: 'apache-arrow RecordBatches',
    rust: ['query_arrow', 'async'],
    run: async (conn, sql) => {
      const c = new Check()
      let s = 0
      for await (const batch of conn.queryArrow(sql)) {
        const v = batch.getChildAt(0).data
        for (const d of v) {
          const values = d.values
          for (let i = 0; i < d.length; i++) s += Number(values[i])
        }
        c.rows += batch.numRows
      }
      c.sum = BigInt(s)
      return c
    },
  },
  {
    variant: 'queryAll',
    flavor: 'eager, row objects',
    rust: ['execute_query', 'async'],
    run: async (conn, sql) => {
      const c = new Check()
      const rows = await conn.queryAll(sql)
      const key = rows.length ? Object.keys(rows[0])[0] : ''
      let s = 0
      for (const r of rows) s += Number(r[key])
      c.rows = rows.length
      c.sum = BigInt(s)
      return c
    },
  },
]

/** The insert workloads' source data: the Rust suite's rows, column by column. */
function insertData(n) {
  const id = new Int32Array(n)
  const sensor = new Int32Array(n)
  const value = new Float64Array(n)
  const ts = new BigInt64Array(n)
  for (let i = 0; i < n; i++) {
    const k = i + 1
    id[i] = k
    sensor[i] = k % 10
    value[i] = k * 0.1
    ts[i] = TS_BASE + BigInt(k) * 1000n
  }
  return { id, sensor_id: sensor, value, timestamp: ts }
}

/** The rows of `data` as arrays, one reused array (a producer's view). */
function* rowsOf(data) {
  const { id, sensor_id, value, timestamp } = data
  const row = [0, 0, 0, 0]
  for (let i = 0; i < id.length; i++) {
    row[0] = id[i]
    row[1] = sensor_id[i]
    row[2] = value[i]
    row[3] = Number(timestamp[i])
    yield row
  }
}

const INSERTS = [
  {
    variant: 'Inserter.addRow',
    flavor: 'JS arrays',
    rust: ['ArrowInserter', 'sync'],
    run: async (conn, t, data) => {
      const ins = await conn.inserter(t)
      const { id, sensor_id, value, timestamp } = data
      const row = [0, 0, 0, 0]
      for (let i = 0; i < id.length; i++) {
        row[0] = id[i]
        row[1] = sensor_id[i]
        row[2] = value[i]
        row[3] = Number(timestamp[i])
        ins.addRow(row)
      }
      return ins.execute()
    },
  },
  {
    variant: 'insertRows',
    flavor: 'JS arrays from a generator',
    rust: ['ArrowInserter', 'sync'],
    run: (conn, t, data) => conn.insertRows(t, rowsOf(data)),
  },
  {
    variant: 'insertColumns',
    flavor: 'TypedArrays',
    rust: ['ArrowInserter', 'sync'],
    run: (conn, t, data) => conn.insertColumns(t, data.columns),
  },
  {
    variant: 'insertArrow',
    flavor: 'apache-arrow Table',
    rust: ['ArrowInserter', 'sync'],
    run: (conn, t, data) => conn.insertArrow(t, data.arrow),
  },
]

async function runInserts(setup, conns, records, rust) {
  const { makeTable } = await import('apache-arrow')
  const columns = insertData(ROWS)
  const data = { ...columns, columns, arrow: makeTable({ ...columns }) }
  const per = Math.ceil(ROWS / WORKERS)
  const parts = conns.map((_, i) => {
    const part = {}
    for (const k of Object.keys(columns)) part[k] = columns[k].subarray(i * per, (i + 1) * per)
    return { ...part, columns: part, arrow: makeTable({ ...part }) }
  })
  const wantSum = (BigInt(ROWS) * BigInt(ROWS + 1)) / 2n
  const variants = INSERTS.map((s) => ({ ...s, workers: 1 }))
  variants.push({ ...INSERTS.find((s) => s.variant === 'insertColumns'), workers: WORKERS })
  for (const style of variants) {
    const runs = []
    let peak = 0
    let p99 = 0
    for (let r = 0; r <= REPEAT; r++) {
      for (let i = 0; i < style.workers; i++) await generate(setup, table(i, style.workers), 1, 1)
      const m = await measured(async () => {
        if (style.workers === 1) return style.run(setup, 'measurements', data)
        const stored = await Promise.all(conns.map((c, i) => style.run(c, table(i, WORKERS), parts[i])))
        return stored.reduce((a, b) => a + b, 0)
      })
      let rows = 0
      let sum = 0n
      for (let i = 0; i < style.workers; i++) {
        const [n, s] = await setup.queryOne(`SELECT count(*), sum(id::BIGINT) FROM ${table(i, style.workers)}`, [], {
          rowMode: 'array',
        })
        rows += Number(n)
        sum += BigInt(s ?? 0)
      }
      if (m.out !== ROWS || rows !== ROWS || sum !== wantSum) {
        throw new Error(
          `insert ${style.variant}: returned ${m.out}, the table holds ${rows} rows with sum(id) ${sum}; ` +
            `${ROWS} rows with sum(id) ${wantSum} were sent`,
        )
      }
      peak = Math.max(peak, m.peak)
      // The warm-up (JIT compilation) is neither timed nor its loop delay.
      if (r > 0) {
        runs.push(m.seconds)
        p99 = Math.max(p99, m.p99)
      }
    }
    records.push(record('insert.bulk', style, ROWS, runs, peak, p99, rust))
  }
}

/**
 * One artifact row, printed as it is made. The Rust figure is the
 * `alternated` rate measured in this run when there is one, else the Rust
 * suite artifact's.
 */
function record(workload, style, resultRows, runs, peak, p99, rust, alternated = null) {
  const seconds = median(runs)
  const rowsPerSec = ROWS / seconds
  const flavor = style.workers === 1 ? style.flavor : `${style.flavor}, async x${style.workers}`
  const rustFlavor = style.workers === 1 ? style.rust[1] : `${style.rust[1]} x${style.workers}`
  const rustRate = alternated ?? rustFigure(rust, workload, style.rust[0], rustFlavor)
  const r = {
    workload,
    variant: style.variant,
    flavor,
    rows: ROWS,
    result_rows: resultRows,
    seconds,
    runs,
    rows_per_sec: rowsPerSec,
    mb_per_sec: (rowsPerSec * BYTES_PER_ROW) / 1e6,
    rust_path: `${style.rust[0]} (${rustFlavor})`,
    rust_rows_per_sec: rustRate,
    rust_measured: alternated !== null ? 'alternated' : rustRate !== null ? 'artifact' : null,
    pct_of_rust: rustRate ? (100 * rowsPerSec) / rustRate : null,
    peak_rss_mib: peak / 2 ** 20,
    p99_event_loop_delay_ms: p99,
  }
  console.log(
    `${r.workload.padEnd(18)} ${r.variant.padEnd(16)} ${flavor.padEnd(38)} ${seconds.toFixed(3)} s ` +
      `${(rowsPerSec / 1e6).toFixed(2)} M rows/s ${r.pct_of_rust === null ? '' : `${r.pct_of_rust.toFixed(0)}% of Rust`} ` +
      `rss ${r.peak_rss_mib.toFixed(0)} MiB p99 ${p99.toFixed(1)} ms`,
  )
  return r
}

function table(i, n) {
  return n === 1 ? 'measurements' : `measurements_${i}`
}

async function generate(conn, name, start, end) {
  await conn.executeCommand(`DROP TABLE IF EXISTS ${name}`)
  await conn.executeCommand(
    `CREATE TABLE ${name} (id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION, timestamp BIGINT)`,
  )
  await conn.executeCommand(
    `INSERT INTO ${name} SELECT i, i % 10, i * 0.1, ${TS_BASE} + i::BIGINT * 1000 FROM generate_series(${start}, ${end - 1}) i`,
  )
}

/** The server's own answer for `sql`: rows and the sum of its first column. */
async function expected(conn, sql) {
  const [rows, sum] = await conn.queryOne(`SELECT count(*), sum(x) FROM (SELECT * FROM (${sql}) q) AS r(x)`, [], {
    rowMode: 'array',
  })
  return { rows: Number(rows), sum: BigInt(sum ?? 0) }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * Runs `f` with RSS and event-loop delay sampled. With `--expose-gc` and
 * `collect` the heap is collected first, so a workload's peak RSS is its
 * own, not what an earlier (eager) workload left behind.
 */
async function measured(f, collect = true) {
  if (collect) globalThis.gc?.()
  // monitorEventLoopDelay records the interval between its timer's ticks,
  // so its floor is the resolution: at the default 10 ms an idle loop
  // reads 10 ms. Sampled every 1 ms, the figure is the delay itself.
  const loop = monitorEventLoopDelay({ resolution: 1 })
  let peak = process.memoryUsage().rss
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 20)
  loop.enable()
  const t = performance.now()
  const out = await f()
  const seconds = (performance.now() - t) / 1000
  loop.disable()
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)
  return { out, seconds, peak, p99: loop.percentile(99) / 1e6 }
}

function rustFigure(rust, workload, variant, flavor) {
  const r = rust?.records?.find((x) => x.workload === workload && x.variant === variant && x.flavor === flavor)
  return r?.rows_per_sec ?? null
}

async function main() {
  const rust = existsSync(RUST_JSON) ? JSON.parse(readFileSync(RUST_JSON, 'utf8')) : null
  const dir = mkdtempSync(join(tmpdir(), 'hyperdb-node-bench-'))
  // TCP, as the Rust suite measures by default (HyperProcess defaults to
  // ipc): the figures compare the same path. TCP requires the password.
  const hyper = await HyperProcess.start({ transport: 'tcp' })
  const server = { endpoint: hyper.endpoint, password: hyper.password }
  const records = []
  let reference = null
  try {
    const db = join(dir, 'bench.hyper')
    const setup = await Connection.connect({ ...server, database: db, createMode: 'createAndReplace' })
    await generate(setup, 'measurements', 1, ROWS + 1)
    const per = Math.ceil(ROWS / WORKERS)
    for (let i = 0; i < WORKERS; i++) {
      await generate(setup, table(i, WORKERS), 1 + i * per, 1 + Math.min(ROWS, (i + 1) * per))
    }
    const conns = [setup]
    for (let i = 1; i < WORKERS; i++) {
      conns.push(await Connection.connect({ ...server, database: db }))
    }
    if (REFERENCE) reference = new RustReference(REFERENCE, server, db)

    // The eager style (`queryAll`) after every streamed read of every
    // query: V8 keeps the pages of its 10M row objects after collecting
    // them, and a streamed read measured after it would report that memory
    // as its own peak. The artifact lists each query's styles together.
    const plans = []
    for (const [workload, sqlOf] of Object.entries(ONLY === 'insert' ? {} : QUERIES)) {
      plans.push(await planWorkload(setup, workload, sqlOf))
    }
    const eager = (style) => style.variant === 'queryAll'
    const byQuery = plans.map(() => [])
    for (const keep of [(style) => !eager(style), eager]) {
      for (const [q, plan] of plans.entries()) {
        byQuery[q].push(...(await readWorkload(setup, conns, reference, rust, plan, keep)))
      }
    }
    records.push(...byQuery.flat())
    if (ONLY !== 'query') await runInserts(setup, conns, records, rust)
    for (const c of conns) await c.close()
  } finally {
    reference?.close()
    await hyper.close()
    rmSync(dir, { recursive: true, force: true })
  }
  write(records, rust)
}

/** Query `workload`'s server-side answers (one connection, and `WORKERS`) and its read styles. */
async function planWorkload(setup, workload, sqlOf) {
  const want = await expected(setup, sqlOf('measurements'))
  const wantN = { rows: 0, sum: 0n }
  for (let i = 0; i < WORKERS; i++) {
    const e = await expected(setup, sqlOf(table(i, WORKERS)))
    wantN.rows += e.rows
    wantN.sum += e.sum
  }
  const variants = STYLES.map((s) => ({ ...s, workers: 1 }))
  for (const s of STYLES.filter((s) => s.variant === 'queryArrow' || s.flavor === 'chunked, row arrays')) {
    variants.push({ ...s, workers: WORKERS })
  }
  return { workload, sqlOf, want, wantN, variants }
}

/**
 * The records of the planned workload's read styles that `keep` keeps.
 * The styles take turns, one run each a round, and with a `reference`
 * each round then runs their Rust paths too: a phase of the machine
 * (another process, a slow stretch of hyperd) falls on every style alike
 * instead of on whichever ran then.
 */
async function readWorkload(setup, conns, reference, rust, plan, keep) {
  const { workload, sqlOf, want, wantN, variants } = plan
  const styles = variants.filter(keep)
  const seen = styles.map(() => ({ runs: [], peak: 0, p99: 0 }))
  const sqls = (workers) => (workers === 1 ? [sqlOf('measurements')] : conns.map((_, i) => sqlOf(table(i, WORKERS))))
  const rustRuns = new Map(styles.map((s) => [rustKey(s), []]))
  for (let r = 0; r <= REPEAT; r++) {
    for (const [k, style] of styles.entries()) {
      // Streamed reads collect before the warm-up only: a read right after a
      // forced full collection measured 5-12 % slower (10M-row queryArrow,
      // medians of 9 alternated runs), a cost no application's read pays.
      // The eager style collects before each run: its peak is the result
      // it holds, not the last run's garbage.
      const m = await measured(
        async () => {
          if (style.workers === 1) return style.run(setup, sqlOf('measurements'))
          const parts = await Promise.all(conns.map((c, i) => style.run(c, sqlOf(table(i, WORKERS)))))
          const all = new Check()
          for (const p of parts) {
            all.rows += p.rows
            all.sum += p.sum
          }
          return all
        },
        (r === 0 && k === 0) || style.variant === 'queryAll',
      )
      check(`${workload} ${style.variant} (${style.flavor})`, m.out, style.workers === 1 ? want : wantN)
      seen[k].peak = Math.max(seen[k].peak, m.peak)
      // The warm-up (JIT compilation) is neither timed nor its loop delay.
      if (r > 0) {
        seen[k].runs.push(m.seconds)
        seen[k].p99 = Math.max(seen[k].p99, m.p99)
      }
    }
    if (!reference) continue
    for (const [key, runs] of rustRuns) {
      const [path, workers] = key.split(' x')
      const got = await reference.read(path, sqls(Number(workers)))
      check(`${workload} Rust ${key}`, got, Number(workers) === 1 ? want : wantN)
      if (r > 0) runs.push(got.seconds)
    }
  }
  return styles.map((style, k) => {
    const { runs, peak, p99 } = seen[k]
    const alternated = reference ? ROWS / median(rustRuns.get(rustKey(style))) : null
    return record(`query.${workload}`, style, want.rows, runs, peak, p99, rust, alternated)
  })
}

/** The Rust path a style compares with, as the reference runs it: `path xN`. */
function rustKey(style) {
  return `${style.rust[0]} x${style.workers}`
}

/** Fails the run unless `got` ({ rows, sum }) is the server's answer `want`. */
function check(what, got, want) {
  if (got.rows !== want.rows || got.sum !== want.sum) {
    throw new Error(
      `${what}: read ${got.rows} rows, checksum ${got.sum}; the server says ${want.rows} rows, checksum ${want.sum}`,
    )
  }
}

/** What the "% of Rust" column compares with, a line for each source in use. */
function rustSources(records, rust) {
  const lines = []
  if (records.some((r) => r.rust_measured === 'alternated')) {
    lines.push(
      '"% of Rust" of the reads: the same Rust path (`node_reference`) on this server and these tables, ' +
        'one run after each round of the Node runs; both medians of the same rounds.',
    )
  }
  if (records.some((r) => r.rust_measured === 'artifact')) {
    lines.push(
      `"% of Rust"${lines.length ? ' of the rest' : ''}: the same path in the Rust suite's artifact ` +
        `(\`${rust.command}\`, ${rust.host?.date ?? ''}).`,
    )
  }
  if (records.some((r) => r.rust_measured === null)) {
    lines.push('No Rust figure for some paths: run the Rust suite first (or pass BENCH_RUST_REFERENCE for the reads).')
  }
  return lines
}

function write(records, rust) {
  const host = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_gib: totalmem() / 2 ** 30,
    node: process.version,
    date: new Date().toISOString(),
  }
  const command = `node __test__/benchmark.mjs ${ROWS}`
  mkdirSync(dirname(OUT), { recursive: true })
  writeFileSync(
    `${OUT}.json`,
    JSON.stringify(
      { command, config: { rows: ROWS, repeat: REPEAT, workers: WORKERS, rust: rust?.command ?? null }, host, records },
      null,
      1,
    ) + '\n',
  )
  const lines = [
    '# hyperdb-api Node benchmark',
    '',
    `\`${command}\` (BENCH_REPEAT=${REPEAT}, BENCH_WORKERS=${WORKERS})`,
    '',
    `${ROWS} rows per workload; a warm-up then ${REPEAT} runs each; times are medians. ` +
      `Node ${host.node}, ${host.cores} cores (${host.cpu}), ${host.date}.`,
    ...rustSources(records, rust),
    '',
    '| Workload | Variant | Flavor | Rows | Time (s) | Rows/sec | MB/sec | Rust path | % of Rust | Peak RSS (MiB) | p99 loop delay (ms) |',
    '|---|---|---|--:|--:|--:|--:|---|--:|--:|--:|',
    ...records.map(
      (r) =>
        `| ${r.workload} | ${r.variant} | ${r.flavor} | ${r.rows} | ${r.seconds.toFixed(3)} | ${(r.rows_per_sec / 1e6).toFixed(2)} M | ` +
        `${r.mb_per_sec.toFixed(1)} | ${r.rust_path}${r.rust_measured === 'alternated' ? ', same run' : ''} | ${r.pct_of_rust === null ? '' : `${r.pct_of_rust.toFixed(0)}%`} | ` +
        `${r.peak_rss_mib.toFixed(0)} | ${r.p99_event_loop_delay_ms.toFixed(1)} |`,
    ),
    '',
    'Rows = rows of the table(s) read (filtered and aggregation read them all and return fewer). ' +
      'MB/sec = Rows x 24 bytes per second. Peak RSS is the whole Node process. ' +
      'p99 loop delay: `monitorEventLoopDelay` sampled every 1 ms (its floor). See docs/BENCHMARKS.md.',
    '',
  ]
  writeFileSync(`${OUT}.md`, lines.join('\n'))
  console.log(`wrote ${OUT}.md and ${OUT}.json`)
}

await main()

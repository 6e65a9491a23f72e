// Child process of memory.test.mjs: reads table m of an existing database
// and prints one JSON line with the count, sums, peak RSS and event-loop
// delay, and the full (mark-compact) collections V8 ran during the read.
// Usage: node memory-reader.mjs <endpoint> <database> <query|columns|arrow|ipc|repeat>
//
// Why a child process: inside a node:test test, Node 20 tracks async
// context with promise hooks, which makes every Promise (a `for await` step
// per row) ~5x slower and inflates the event-loop delay; a plain process
// measures the package, not the test harness.
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks'
import { Connection } from '../dist/index.mjs'

const [endpoint, database, mode] = process.argv.slice(2)

let peak = process.memoryUsage().rss
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss)
}, 50)
const delay = monitorEventLoopDelay({ resolution: 10 })
let reading = false
let fullGcs = 0
const gcs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (reading && e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs++
  }
})
gcs.observe({ entryTypes: ['gc'] })

const conn = await Connection.connect({ endpoint, database })
// A first read, unmeasured, so that V8's heap has grown to the size this
// work needs: collections that size the heap are not the read's.
for await (const batch of conn.queryArrow('SELECT id FROM m LIMIT 3000000')) void batch
const t0 = performance.now()
delay.enable()
reading = true
const out = { mode, count: 0, idSum: 0, sensorSum: 0, checked: 0, errors: [] }
/** Adds a batch's columns (id, sensor_id, ts) to the count and sums; checks its first ts. */
function addColumns(rows, ids, sensors, ts) {
  for (let i = 0; i < rows; i++) {
    out.idSum += ids[i]
    out.sensorSum += sensors[i]
  }
  if (rows > 0) {
    if (ts[0] !== BigInt(ids[0]) * 1000n) out.errors.push(`ts of id ${ids[0]} is ${ts[0]}`)
    out.checked++
  }
  out.count += rows
}

/** `addColumns` for an apache-arrow `RecordBatch` of (id, sensor_id, ts). */
function addArrowBatch(batch) {
  const values = (i) => batch.getChildAt(i).data[0].values
  addColumns(batch.numRows, values(0), values(1), values(2))
}

if (mode === 'query') {
  for await (const row of conn.query('SELECT id, sensor_id, value, ts FROM m')) {
    out.count++
    out.idSum += row.id
    out.sensorSum += row.sensor_id
    // Spot-check whole rows (every 100003rd id).
    if (row.id % 100_003 === 0) {
      if (row.sensor_id !== row.id % 100 || row.value !== row.id * 0.5 || row.ts !== BigInt(row.id) * 1000n) {
        out.errors.push(`row ${row.id}: ${row.sensor_id} ${row.value} ${row.ts}`)
      }
      out.checked++
    }
  }
} else if (mode === 'columns') {
  for await (const chunk of conn.queryColumns('SELECT id, sensor_id, ts FROM m')) {
    const ids = chunk.column('id').values
    const ts = chunk.column('ts').values
    if (!(ids instanceof Int32Array) || !(ts instanceof BigInt64Array)) out.errors.push('unexpected column arrays')
    addColumns(chunk.numRows, ids, chunk.column('sensor_id').values, ts)
  }
} else if (mode === 'arrow') {
  for await (const batch of conn.queryArrow('SELECT id, sensor_id, ts FROM m')) addArrowBatch(batch)
} else if (mode === 'ipc') {
  const { RecordBatchReader } = await import('apache-arrow')
  const reader = await RecordBatchReader.from(conn.queryArrowIpc('SELECT id, sensor_id, ts FROM m'))
  for await (const batch of reader) addArrowBatch(batch)
} else if (mode === 'repeat') {
  // Many medium reads, each a few dozen messages: RSS after a quarter of
  // them and at the end (what a long-running service sees).
  const READS = 2000
  for (let i = 0; i < READS; i++) {
    for await (const chunk of conn.queryColumns('SELECT id FROM m WHERE id <= 100000')) {
      const ids = chunk.column('id').values
      for (let r = 0; r < chunk.numRows; r++) out.idSum += ids[r]
      out.count += chunk.numRows
    }
    if (i === READS / 4 - 1) out.quarterRss = process.memoryUsage().rss
  }
  out.endRss = process.memoryUsage().rss
} else {
  throw new Error(`unknown mode ${mode}`)
}
// Entries of collections that ran during the read arrive in a later task.
await new Promise((resolve) => setImmediate(resolve))
reading = false
gcs.disconnect()
out.fullGcs = fullGcs
delay.disable()
out.ms = performance.now() - t0
peak = Math.max(peak, process.memoryUsage().rss)
clearInterval(sampler)
await conn.close()
out.peakRss = peak
out.delayP50Ms = delay.percentile(50) / 1e6
out.delayP99Ms = delay.percentile(99) / 1e6
out.delayMaxMs = delay.max / 1e6
out.delaySamples = delay.count
process.stdout.write(`${JSON.stringify(out)}\n`)

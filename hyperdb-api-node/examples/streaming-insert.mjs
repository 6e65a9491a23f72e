// A streaming insert: rows come from an async generator (a file, a queue,
// another database) and go into hyperd as they arrive, in batches, with
// constant memory: the generator waits whenever hyperd is behind.
import { HyperProcess, Connection, HyperTimestamp } from 'hyperdb-api'

const ROWS = Number(process.argv[2] ?? 1_000_000)

async function* readings() {
  for (let i = 0; i < ROWS; i++) {
    // Objects keyed by column name; arrays in column order work too.
    yield {
      id: i,
      sensor: `s${i % 16}`,
      value: Math.sin(i),
      at: new HyperTimestamp(1_700_000_000_000_000n + BigInt(i)),
    }
  }
}

const hyper = await HyperProcess.start()
const conn = await Connection.connect({
  endpoint: hyper.endpoint,
  database: 'readings.hyper',
  createMode: 'createAndReplace',
})
try {
  await conn.executeCommand(
    'CREATE TABLE readings (id INT NOT NULL, sensor TEXT, value DOUBLE PRECISION, at TIMESTAMP)',
  )
  const t = performance.now()
  // All or nothing: a value that does not fit its column rejects the whole insert.
  const stored = await conn.insertRows('readings', readings())
  console.log(`${stored} rows in ${((performance.now() - t) / 1000).toFixed(2)} s`)
  console.log(await conn.queryAll('SELECT sensor, count(*) AS n FROM readings GROUP BY 1 ORDER BY 1 LIMIT 3'))
} finally {
  await conn.close()
  await hyper.close()
}

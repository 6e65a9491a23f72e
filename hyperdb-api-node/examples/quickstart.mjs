// The README's Node quick start: start hyperd, create a .hyper file,
// insert rows and read them in each style. `node examples/quickstart.mjs [FILE]`
import { HyperProcess, Connection, SqlType, numeric } from 'hyperdb-api'

const hyper = await HyperProcess.start() // never blocks the event loop
const conn = await Connection.connect({
  endpoint: hyper.endpoint,
  database: process.argv[2] ?? 'sensors.hyper',
  createMode: 'createAndReplace',
})

await conn.catalog.createTable({
  name: 'measurements',
  columns: [
    { name: 'id', type: SqlType.int(), nullable: false },
    { name: 'sensor_id', type: SqlType.int() },
    { name: 'value', type: SqlType.double() },
    { name: 'price', type: SqlType.numeric(18, 2) },
  ],
})
await conn.executeCommand(
  'INSERT INTO measurements SELECT i, i % 10, i * 0.1, i * 0.01 FROM generate_series(1, 1000000) g(i)',
)
await conn.executeCommand('INSERT INTO measurements VALUES ($1, $2, $3, $4)', [0, 7, 1.5, numeric('19.99')])

// Rows, streamed with bounded memory whatever the result size.
for await (const row of conn.query('SELECT id, value FROM measurements WHERE sensor_id = $1 ORDER BY id LIMIT 5', [7])) {
  console.log(row.id, row.value)
}
const rows = await conn.queryAll('SELECT sensor_id, avg(value) AS avg FROM measurements GROUP BY 1', [], {
  rowMode: 'array',
})
const count = await conn.queryScalar('SELECT count(*) FROM measurements') // 1000001n (BIGINT: bigint)

// Columns: TypedArrays over the received memory, one chunk per batch.
// Checking a column's kind narrows its values' type.
for await (const chunk of conn.queryColumns('SELECT id, value FROM measurements')) {
  const ids = chunk.columns[0]
  if (ids?.kind === 'int32') console.log(ids.values[0]) // ids.values: Int32Array
}

// Arrow: apache-arrow RecordBatches (npm install apache-arrow), or raw IPC bytes.
for await (const batch of conn.queryArrow('SELECT * FROM measurements')) {
  console.log(`${batch.numRows} rows`)
}

await conn.close() // or `await using conn = ...` where the syntax is available
await hyper.close()

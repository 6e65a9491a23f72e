// Arrow in and out: build an apache-arrow Table in JS, store it with one
// insertArrow call, and read it back as a Table. Needs apache-arrow
// (npm install apache-arrow). `node examples/arrow-roundtrip.mjs [FILE]`
import { HyperProcess, Connection } from 'hyperdb-api'
import { Table, Utf8, makeVector, vectorFromArray } from 'apache-arrow'

const hyper = await HyperProcess.start()
const conn = await Connection.connect({
  endpoint: hyper.endpoint,
  database: process.argv[2] ?? 'arrow.hyper',
  createMode: 'createAndReplace',
})

// insertArrow checks the Arrow schema against the table before sending:
// field names must match the columns, and the Arrow types the SQL types.
await conn.executeCommand('CREATE TABLE trades (id INTEGER NOT NULL, price DOUBLE PRECISION, symbol TEXT, qty BIGINT)')

const sent = new Table({
  // Typed arrays become Arrow vectors without copying.
  id: makeVector(Int32Array.from([1, 2, 3])),
  price: makeVector(Float64Array.from([101.25, 99.5, 100.0])),
  // An explicit Utf8 type: inferred from JS strings it would be a dictionary.
  symbol: vectorFromArray(['ABC', null, 'XYZ'], new Utf8()),
  // BIGINT is Int64: BigInt64Array, so values past 2^53 stay exact.
  qty: makeVector(BigInt64Array.from([10n, 9_007_199_254_740_993n, -5n])),
})
console.log(`inserted ${await conn.insertArrow('trades', sent)} rows`)

const received = await conn.queryArrowTable('SELECT id, price, symbol, qty FROM trades ORDER BY id')
for (const field of received.schema.fields) console.log(`${field.name}: ${field.type}`)
for (const row of received) console.log(row.toJSON())

// The round trip is exact, NULL and 64-bit values included.
const show = (values) => JSON.stringify(values, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))
for (const { name } of sent.schema.fields) {
  const [want, got] = [show([...sent.getChild(name)]), show([...received.getChild(name)])]
  if (got !== want) throw new Error(`${name}: sent ${want}, received ${got}`)
}
console.log('round trip exact')

await conn.close()
await hyper.close()

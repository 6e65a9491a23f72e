// Compiled (never run) by typings.test.mjs against the published typings,
// with library checks on: what a strict TypeScript user writes must
// type-check, and misuse must not (each `@ts-expect-error` fails the
// build if its line compiles). `exactOptionalPropertyTypes` is on: an
// option may be given as a value that is possibly undefined.
import {
  Connection,
  HyperProcess,
  HyperTimestamp,
  type ColumnVector,
  type RowArray,
  type RowObject,
  type RowQueryOptions,
} from '../../dist/index.js'

export async function rowModeKnownAtRunTime(conn: Connection, options: RowQueryOptions): Promise<number> {
  const all: RowObject[] | RowArray[] = await conn.queryAll('SELECT 1', [], options)
  const one: RowObject | RowArray | null = await conn.queryOne('SELECT 1', [], options)
  let n = all.length + (one === null ? 0 : 1)
  for await (const row of conn.query('SELECT 1', [], options)) n += Array.isArray(row) ? row.length : 1
  for await (const chunk of conn.queryChunks('SELECT 1', [], { rowMode: options.rowMode })) n += chunk.length
  return n
}

export async function rowModesKnownAtCompileTime(conn: Connection): Promise<void> {
  const arrays: RowArray[] = await conn.queryAll('SELECT 1', [], { rowMode: 'array' })
  const objects: RowObject[] = await conn.queryAll('SELECT 1 AS a')
  // @ts-expect-error: array rows are not objects
  const wrong: RowObject[] = await conn.queryAll('SELECT 1', [], { rowMode: 'array' })
  void [arrays, objects, wrong]
}

export function kindsNarrowValues(column: ColumnVector): number {
  if (column.kind === 'int32') return column.values[0] + 1
  if (column.kind === 'float64' || column.kind === 'date') return column.values[0]
  if (column.kind === 'int64' || column.kind === 'timestamp') return Number(column.values[0])
  if (column.kind === 'text') return column.values[0]?.length ?? 0
  // @ts-expect-error: values of any kind may be strings, not numbers
  const sum: number = column.values[0] + 1
  return sum
}

export async function arrowTypes(conn: Connection): Promise<number> {
  const table = await conn.queryArrowTable('SELECT 1 AS a')
  let rows = table.numRows
  for await (const batch of conn.queryArrow('SELECT 1')) rows += batch.numRows
  return rows + HyperTimestamp.fromDate(new Date()).toDate().getTime()
}

export async function catalogNamesAreQualified(conn: Connection): Promise<string[]> {
  const tables = await conn.catalog.getTableNames()
  const schemas = await conn.catalog.getSchemaNames()
  return [...tables.map((t) => `${t.schema ?? ''}.${t.name}`), ...schemas.map((s) => s.name)]
}

export async function optionsMayBeUndefined(logDir: string | undefined): Promise<void> {
  const hyper = await HyperProcess.start({ hyperdPath: process.env.HYPERD_PATH, logDir, transport: undefined })
  const conn = await Connection.connect({
    endpoint: hyper.endpoint,
    password: hyper.password,
    database: process.env.DATABASE,
    createMode: undefined,
  })
  await conn.queryAll('SELECT 1', [], { rowMode: undefined, signal: undefined, bigint: undefined })
  await conn.catalog.createTable({ name: 't', columns: [{ name: 'a', type: 'INT', nullable: undefined }] })
  await conn.close()
  await hyper.close()
}

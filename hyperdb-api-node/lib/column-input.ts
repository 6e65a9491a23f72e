/**
 * `insertColumns`: whole columns into a table. A TypedArray whose element
 * type is the column's own (Int32Array for INTEGER, Float64Array for
 * DOUBLE PRECISION, BigInt64Array of microseconds for TIMESTAMP, ...)
 * crosses to the native layer a batch at a time as the bytes it already
 * is, with no per-value JS work; any other array goes value by value
 * through the same checks as `Inserter.addRow`, and a DATE column also
 * takes the Float64Array of milliseconds `queryColumns` reads it as.
 */
import type { ColumnDef, NativeColumn } from './native'
import { call, ErrorCode, HyperError } from './errors'
import { checkRecord, shown } from './options'
import type { Catalog, TableDefinition, TableName } from './catalog'
import { BATCH_UNITS, columnBuilder, DateBuilder, type BatchStart, type ColumnBuilder } from './insert-columns'
import { batchRows as checkBatchRows, openInserter, type HasNative } from './inserter'

type TypedArray =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array

/** A column's values: a TypedArray, or any array of values `addRow` takes. */
export type ColumnValues = TypedArray | readonly unknown[]

export interface InsertColumnsOptions {
  /** Per column, which rows are NULL (1 or `true` = NULL). */
  nulls?: Record<string, Uint8Array | readonly boolean[]> | undefined
  /** Rows sent a batch (default 65536; a batch also ends at 16 Mi characters and bytes of text and binary values). */
  batchRows?: number | undefined
}

/** The TypedArray whose bytes are the column's Arrow values as they are. */
const NATIVE_ARRAYS: Record<string, new (n: number) => TypedArray> = {
  BOOLEAN: Uint8Array,
  SMALLINT: Int16Array,
  INTEGER: Int32Array,
  OID: Uint32Array,
  BIGINT: BigInt64Array,
  REAL: Float32Array,
  'DOUBLE PRECISION': Float64Array,
  TIME: BigInt64Array,
  TIMESTAMP: BigInt64Array,
  'TIMESTAMP WITH TIME ZONE': BigInt64Array,
}

/** One column's source: its values, NULL rows, and how a batch is cut from them. */
class ColumnSource {
  private readonly direct: boolean
  private readonly builder: ColumnBuilder
  /** A DATE column given as `queryColumns` reads one: a Float64Array of milliseconds. */
  private readonly dateMillis?: DateBuilder
  private readonly valid?: Uint8Array

  constructor(
    column: ColumnDef,
    private readonly values: ColumnValues,
    private readonly nulls: Uint8Array | readonly boolean[] | undefined,
    start: BatchStart,
    batchRows: number,
  ) {
    const own = NATIVE_ARRAYS[column.sqlType]
    this.direct = own !== undefined && values instanceof own
    this.builder = columnBuilder(column, start, batchRows)
    if (this.builder instanceof DateBuilder && values instanceof Float64Array) this.dateMillis = this.builder
    this.valid = nulls === undefined ? undefined : new Uint8Array(batchRows)
  }

  /** Whether the column's values vary in length (text, bytes), which bounds a batch's rows. */
  get varies(): boolean {
    return this.builder.varies
  }

  /** Characters or bytes of row `i`'s value (0 for others). */
  units(i: number): number {
    const v = this.values[i] as unknown
    return typeof v === 'string' || v instanceof Uint8Array ? v.length : 0
  }

  /** Rows `from .. from + rows` as a native column. */
  batch(from: number, rows: number): NativeColumn {
    if (!this.direct) {
      this.builder.reset()
      const values = this.values
      const nulls = this.nulls
      const dates = this.dateMillis
      for (let i = 0; i < rows; i++) {
        if (nulls?.[from + i]) this.builder.set(null, i)
        else if (dates !== undefined) dates.setMillis(values[from + i] as number, i)
        else this.builder.set(values[from + i], i)
      }
      return this.builder.column(rows)
    }
    const v = this.values as TypedArray
    const width = v.BYTES_PER_ELEMENT
    return {
      fixed: new Uint8Array(v.buffer, v.byteOffset + from * width, rows * width),
      validity: this.validity(from, rows),
    }
  }

  private validity(from: number, rows: number): Uint8Array | undefined {
    const { nulls, valid } = this
    if (nulls === undefined || valid === undefined) return undefined
    let any = false
    for (let i = 0; i < rows; i++) {
      const isNull = nulls[from + i] ? 1 : 0
      valid[i] = 1 - isNull
      any ||= isNull === 1
    }
    return any ? valid.subarray(0, rows) : undefined
  }
}

/**
 * Inserts `columns` (keyed by column name, one entry per column of the
 * table, all of one length) into `table`; returns the rows stored. All
 * or nothing.
 */
export async function insertColumns(
  conn: HasNative & { readonly catalog: Catalog },
  table: TableName | TableDefinition,
  columns: Readonly<Record<string, ColumnValues>>,
  options: InsertColumnsOptions = {},
): Promise<number> {
  // Arguments first: an inserter once open holds the connection's place.
  const batchRows = checkBatchRows(options, ['nulls', 'batchRows'])
  checkRecord(columns, 'insertColumns: columns', 'an object of arrays keyed by column name')
  if (options.nulls !== undefined) {
    checkRecord(options.nulls, 'insertColumns: nulls', 'an object of arrays keyed by column name')
  }
  const { native: inserter, def } = await openInserter(conn, table)
  try {
    const rows = checkShape(def.columns, columns, options.nulls)
    const start: BatchStart = { row: 0, units: 0 }
    const sources = def.columns.map(
      (c) =>
        new ColumnSource(c, columns[c.name], options.nulls?.[c.name], start, Math.min(batchRows, Math.max(rows, 1))),
    )
    const varying = sources.filter((s) => s.varies)
    for (let from = 0, n = 0; from < rows; from += n) {
      start.row = from
      n = batchLength(varying, from, Math.min(batchRows, rows - from))
      const batch = sources.map((s) => s.batch(from, n))
      // The last batch goes with the commit: one crossing, not two.
      if (from + n >= rows) return await call(() => inserter.finish(n, batch))
      await call(() => inserter.send(n, batch))
    }
    return await call(inserter.finish())
  } catch (e) {
    await inserter.abort().catch(() => undefined)
    throw e
  }
}

/** The common length of `columns`, which must be exactly the table's. */
function checkShape(
  defs: readonly ColumnDef[],
  columns: Readonly<Record<string, ColumnValues>>,
  nulls: InsertColumnsOptions['nulls'],
): number {
  const refuse = (message: string) => new HyperError({ code: ErrorCode.INVALID_PARAMETER_VALUE, message })
  const names = new Set(defs.map((c) => c.name))
  for (const key of [...Object.keys(columns), ...Object.keys(nulls ?? {})]) {
    if (!names.has(key)) throw refuse(`insertColumns: the table has no column \`${key}\``)
  }
  let rows: number | undefined
  for (const c of defs) {
    const values = columns[c.name]
    if (values === undefined) throw refuse(`insertColumns: no values for column \`${c.name}\``)
    if (!ArrayBuffer.isView(values) && !Array.isArray(values)) {
      throw refuse(`insertColumns: column \`${c.name}\` takes a TypedArray or an array`)
    }
    rows ??= values.length
    if (values.length !== rows) {
      throw refuse(`insertColumns: column \`${c.name}\` has ${values.length} values, the first column ${rows}`)
    }
    const n = nulls?.[c.name]
    if (n !== undefined && !ArrayBuffer.isView(n) && !Array.isArray(n)) {
      throw refuse(`insertColumns: nulls of \`${c.name}\` takes a Uint8Array or an array of booleans`)
    }
    if (n !== undefined && n.length !== rows) {
      throw refuse(`insertColumns: nulls of \`${c.name}\` has ${n.length} entries for ${rows} rows`)
    }
    if (Array.isArray(n)) {
      // Any truthy entry would mark a NULL: a 2 or a 'no' is a mistake.
      const bad = n.findIndex((v) => typeof v !== 'boolean')
      if (bad >= 0) {
        throw refuse(`insertColumns: nulls of \`${c.name}\` takes booleans; entry ${bad} is ${shown(n[bad])}`)
      }
    }
  }
  return rows ?? 0
}

/**
 * Rows from `from` in the next batch: at most `most`, ending once the
 * varying columns' values reach `BATCH_UNITS` characters or bytes (see
 * there), and at least one.
 */
function batchLength(varying: readonly ColumnSource[], from: number, most: number): number {
  if (varying.length === 0) return most
  let units = 0
  let n = 0
  while (n < most && units < BATCH_UNITS) {
    for (const s of varying) units += s.units(from + n)
    n++
  }
  return n
}

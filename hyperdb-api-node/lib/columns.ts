/**
 * Native column batches as JavaScript values: column vectors for
 * `queryColumns`, and rows built from them for `query` (one native call a
 * batch; rows are assembled here by a function generated once per result
 * shape, so V8 sees plain monomorphic object literals).
 */
import type { ColumnBatch, ColumnData } from './column-handover'
import type { ColumnInfo } from './native'
import { ErrorCode, HyperError } from './errors'
import { HyperInterval, HyperTime, HyperTimestamp, timestampMicros } from './values'

/** How a column's values are carried (see `ColumnVector.values`). */
export type ColumnKind =
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'float32'
  | 'float64'
  | 'bool'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'timestamptz'
  | 'interval'
  | 'numeric'
  | 'text'
  | 'json'
  | 'bytes'

/** A result column. */
export interface ResultColumn {
  readonly name: string
  /** As hyperd spells it: `INTEGER`, `VARCHAR(10)`, `NUMERIC(18,3)`, `UUID` (a `text` column), ... */
  readonly sqlType: string
  readonly kind: ColumnKind
  readonly nullable: boolean
}

/** A JS value read from a result (SQL NULL is `null`). */
export type HyperValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Date
  | Buffer
  | HyperTimestamp
  | HyperTime
  | HyperInterval

/**
 * What a column's `values` is, by its kind: a TypedArray over the received
 * memory for the fixed-width kinds (timestamp / timestamptz: microseconds
 * since 1970-01-01 UTC; time: microseconds since midnight; date:
 * milliseconds since 1970-01-01; bool: 0 or 1), where a NULL's slot holds
 * no value to rely on (`validity` tells); for the others an `Array` with
 * `null` for NULL (numeric as exact decimal text).
 */
export interface VectorValues {
  int16: Int16Array
  int32: Int32Array
  int64: BigInt64Array
  uint32: Uint32Array
  float32: Float32Array
  float64: Float64Array
  bool: Uint8Array
  date: Float64Array
  time: BigInt64Array
  timestamp: BigInt64Array
  timestamptz: BigInt64Array
  interval: Array<HyperInterval | null>
  numeric: Array<string | null>
  text: Array<string | null>
  json: Array<string | null>
  bytes: Array<Buffer | null>
}

/**
 * One column of one chunk, of kind `K`.
 *
 * `validity` is Arrow's bitmap (bit `i % 8` of byte `i >> 3` is 1 when row
 * `i` is not NULL), or `null` when no value of the chunk is NULL.
 * `get(i)` reads one value as `query` would return it.
 */
export interface ColumnVectorOf<K extends ColumnKind> {
  readonly name: string
  readonly sqlType: string
  readonly kind: K
  readonly length: number
  readonly values: VectorValues[K]
  readonly validity: Uint8Array | null
  isNull(i: number): boolean
  get(i: number): HyperValue
}

/**
 * One column of one chunk; checking its `kind` narrows `values`
 * (`if (c.kind === 'int32') c.values` is an `Int32Array`).
 */
export type ColumnVector = { [K in ColumnKind]: ColumnVectorOf<K> }[ColumnKind]

/** A chunk of a result, column by column. */
export interface ColumnChunk {
  readonly numRows: number
  readonly columns: readonly ColumnVector[]
  /** The column called `name` (the first, if several are). */
  column(name: string): ColumnVector | undefined
}

/** How values are read. */
export interface ValueOptions {
  /**
   * BIGINT as `bigint` (default), or as `number`, which throws a
   * `HyperError` (22003) for a value past 2^53 instead of rounding it.
   */
  bigint?: 'bigint' | 'number' | undefined
}

const TWO_53 = 2n ** 53n

function isValid(validity: Uint8Array, i: number): boolean {
  return ((validity[i >>> 3] >>> (i & 7)) & 1) === 1
}

/** `read(i)` for each row `i` valid in `validity` (all when `null`), else `null`. */
function mapValid<T>(n: number, validity: Uint8Array | null, read: (i: number) => T): Array<T | null> {
  const out: Array<T | null> = new Array(n)
  for (let i = 0; i < n; i++) {
    out[i] = validity === null || isValid(validity, i) ? read(i) : null
  }
  return out
}

/** The values of a varying-width column as a JS array (`null` for NULL). */
function varying<T>(c: ColumnData, n: number, read: (start: number, end: number) => T): Array<T | null> {
  const o = c.offsets as Int32Array
  return mapValid(n, c.validity ?? null, (i) => read(o[i], o[i + 1]))
}

function rawValues(c: ColumnData, n: number): VectorValues[ColumnKind] {
  switch (c.kind) {
    case 'int16':
      return c.int16 as Int16Array
    case 'int32':
      return c.int32 as Int32Array
    case 'int64':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return c.int64 as BigInt64Array
    case 'uint32':
      return c.uint32 as Uint32Array
    case 'float32':
      return c.float32 as Float32Array
    case 'float64':
    case 'date':
      return c.float64 as Float64Array
    case 'bool':
      return c.bytes as Uint8Array
    case 'text':
    case 'json':
    case 'numeric': {
      const text = c.text as string
      return varying(c, n, (a, b) => text.slice(a, b))
    }
    case 'bytes': {
      const bytes = c.bytes as Uint8Array
      const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      return varying(c, n, (a, b) => buf.subarray(a, b))
    }
    case 'interval': {
      const months = c.int32 as Int32Array
      const days = c.days as Int32Array
      const micros = c.int64 as BigInt64Array
      return mapValid(n, c.validity ?? null, (i) => new HyperInterval(months[i], days[i], micros[i]))
    }
    default:
      throw new HyperError({ code: ErrorCode.DATATYPE_MISMATCH, message: `unknown column kind ${c.kind}` })
  }
}

function bigintAsNumber(v: bigint, column: string): number {
  if (v > TWO_53 || v < -TWO_53) {
    throw new HyperError({
      code: ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE,
      message: `column ${column}: BIGINT ${v} is past 2^53, which a number cannot hold exactly; read it as a bigint`,
    })
  }
  return Number(v)
}

function dateValue(ms: number, column: string): Date {
  const d = new Date(ms)
  if (Number.isNaN(d.getTime())) {
    throw new HyperError({
      code: ErrorCode.NUMERIC_VALUE_OUT_OF_RANGE,
      message: `column ${column}: DATE ${ms / 86_400_000} days from 1970 is outside what a JS Date holds`,
    })
  }
  return d
}

/**
 * The column's values such that `cells[i]` is what a row holds, and the
 * validity still to check (`null` when `cells` has its NULLs already).
 */
function cells(
  info: ColumnInfo,
  c: ColumnData,
  n: number,
  options: ValueOptions,
): { cells: ArrayLike<HyperValue>; validity: Uint8Array | null } {
  const raw = rawValues(c, n)
  const validity = c.validity ?? null
  const convert = (f: (i: number) => HyperValue) => ({ cells: mapValid(n, validity, f), validity: null })
  switch (c.kind) {
    case 'int64': {
      if (options.bigint === 'number') {
        const v = raw as BigInt64Array
        return convert((i) => bigintAsNumber(v[i], info.name))
      }
      return { cells: raw as BigInt64Array as unknown as ArrayLike<bigint>, validity }
    }
    case 'bool': {
      const v = raw as Uint8Array
      return convert((i) => v[i] === 1)
    }
    case 'date': {
      const v = raw as Float64Array
      return convert((i) => dateValue(v[i], info.name))
    }
    case 'timestamp':
    case 'timestamptz': {
      const v = raw as BigInt64Array
      const tz = c.kind === 'timestamptz'
      return convert((i) => new HyperTimestamp(timestampMicros(v[i]), tz))
    }
    case 'time': {
      const v = raw as BigInt64Array
      return convert((i) => new HyperTime(v[i]))
    }
    case 'int16':
    case 'int32':
    case 'uint32':
    case 'float32':
    case 'float64':
      return { cells: raw as ArrayLike<number>, validity }
    default:
      // Arrays with their NULLs in place.
      return { cells: raw as ArrayLike<HyperValue>, validity: null }
  }
}

class Vector implements ColumnVectorOf<ColumnKind> {
  constructor(
    readonly name: string,
    readonly sqlType: string,
    readonly kind: ColumnKind,
    readonly length: number,
    readonly values: VectorValues[ColumnKind],
    readonly validity: Uint8Array | null,
    private readonly options: ValueOptions,
  ) {}

  isNull(i: number): boolean {
    if (this.validity !== null) {
      return !isValid(this.validity, i)
    }
    return Array.isArray(this.values) && this.values[i] === null
  }

  get(i: number): HyperValue {
    if (this.isNull(i)) return null
    const v = this.values[i]
    switch (this.kind) {
      case 'int64':
        return this.options.bigint === 'number' ? bigintAsNumber(v as bigint, this.name) : (v as bigint)
      case 'bool':
        return v === 1
      case 'date':
        return dateValue(v as number, this.name)
      case 'timestamp':
      case 'timestamptz':
        return new HyperTimestamp(v as bigint, this.kind === 'timestamptz')
      case 'time':
        return new HyperTime(v as bigint)
      default:
        return v as HyperValue
    }
  }
}

class Chunk implements ColumnChunk {
  constructor(
    readonly numRows: number,
    readonly columns: readonly ColumnVector[],
  ) {}

  column(name: string): ColumnVector | undefined {
    return this.columns.find((c) => c.name === name)
  }
}

export function columnChunk(infos: readonly ColumnInfo[], batch: ColumnBatch, options: ValueOptions): ColumnChunk {
  const n = batch.numRows
  const vectors = batch.columns.map((c, j) => {
    const info = infos[j]
    // Its kind and values agree: `rawValues` picks the values by the kind.
    return new Vector(
      info.name,
      info.sqlType,
      c.kind as ColumnKind,
      n,
      rawValues(c, n),
      c.validity ?? null,
      options,
    ) as ColumnVector
  })
  return new Chunk(n, vectors)
}

export function resultColumns(infos: readonly ColumnInfo[]): ResultColumn[] {
  return infos.map((c) => ({ name: c.name, sqlType: c.sqlType, kind: c.kind as ColumnKind, nullable: c.nullable }))
}

/** A row as an object keyed by column name, or as an array. */
export type RowObject = Record<string, HyperValue>
export type RowArray = HyperValue[]
export type RowMode = 'object' | 'array'

/** Row `i` of one batch. */
export type RowMaker = (i: number) => unknown

type RowBuilder = (cells: ArrayLike<HyperValue>[], validity: (Uint8Array | null)[]) => RowMaker

/**
 * A column name as an object literal's key: a JSON string literal, never
 * code. `"__proto__": v` in a literal sets the prototype instead (a column
 * of that name vanished from its rows, or became their prototype), so that
 * name is a computed key, which makes an own property like any other.
 */
function propertyKey(name: string): string {
  const key = JSON.stringify(name)
  return name === '__proto__' ? `[${key}]` : key
}

/**
 * A function that, given a batch's cells, makes its rows one at a time:
 * one object literal (or array) per row with the columns in order,
 * generated per shape so that every row has the same hidden class. A row
 * is made when it is asked for, so that it dies young: rows made a batch
 * at a time lived until the consumer reached the batch's end, and each
 * young-generation collection copied the ones not yet read.
 */
function rowBuilder(names: readonly string[], mode: RowMode, nullable: readonly boolean[]): RowBuilder {
  const cell = (j: number) =>
    nullable[j] ? `(v${j} === null || ((v${j}[i >>> 3] >>> (i & 7)) & 1) === 1 ? c${j}[i] : null)` : `c${j}[i]`
  const values = names.map((_, j) => cell(j))
  // An array row is filled in place: an array literal of mixed values
  // (integers, doubles, bigints) measured ~10 % slower to build and read.
  const row =
    mode === 'array'
      ? `{ const r = new Array(${names.length}); ${values.map((v, j) => `r[${j}] = ${v};`).join(' ')} return r; }`
      : `({ ${names.map((name, j) => `${propertyKey(name)}: ${values[j]}`).join(', ')} })`
  const locals = names.map((_, j) => `const c${j} = cells[${j}], v${j} = validity[${j}];`).join('\n')
  return new Function('cells', 'validity', `${locals}\nreturn (i) => ${row}`) as RowBuilder
}

/**
 * Row builders by shape (mode, validity checks, column names), shared by
 * every result of that shape: a builder generated anew for each query
 * started each one in the interpreter, its first batch 10K rows of
 * unoptimized code. Emptied when it holds `MAX_SHAPES`, so that results
 * of ever new column names cannot grow it without bound.
 */
const builderCache = new Map<string, RowBuilder>()
const MAX_SHAPES = 256

/** `shape` is `shapeKey(names, mode)`, made once per result. */
function cachedRowBuilder(
  shape: string,
  names: readonly string[],
  mode: RowMode,
  checks: readonly boolean[],
): RowBuilder {
  const key = `${checks.map((c) => (c ? '1' : '0')).join('')}:${shape}`
  let b = builderCache.get(key)
  if (b === undefined) {
    if (builderCache.size >= MAX_SHAPES) builderCache.clear()
    b = rowBuilder(names, mode, checks)
    builderCache.set(key, b)
  }
  return b
}

function shapeKey(names: readonly string[], mode: RowMode): string {
  return `${mode}:${JSON.stringify(names)}`
}

/** Turns batches of one result into rows. */
export class RowAssembler {
  private readonly build: RowBuilder
  private readonly names: readonly string[]
  private readonly shape: string

  constructor(
    private readonly infos: readonly ColumnInfo[],
    private readonly mode: RowMode,
    private readonly options: ValueOptions,
  ) {
    this.names = infos.map((c) => c.name)
    this.shape = shapeKey(this.names, mode)
    this.build = cachedRowBuilder(
      this.shape,
      this.names,
      mode,
      infos.map(() => true),
    )
  }

  /** Makes the batch's rows one at a time (see `rowBuilder`). */
  rowMaker(batch: ColumnBatch): RowMaker {
    const n = batch.numRows
    const cellsOf: ArrayLike<HyperValue>[] = []
    const validity: (Uint8Array | null)[] = []
    for (let j = 0; j < batch.columns.length; j++) {
      const c = cells(this.infos[j], batch.columns[j], n, this.options)
      cellsOf.push(c.cells)
      validity.push(c.validity)
    }
    // Columns without NULLs in this batch skip the validity check.
    const build = validity.every((v) => v !== null)
      ? this.build
      : cachedRowBuilder(
          this.shape,
          this.names,
          this.mode,
          validity.map((v) => v !== null),
        )
    return build(cellsOf, validity)
  }
}

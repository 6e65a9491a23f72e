/**
 * `insertArrow`: Arrow data into a table as one IPC stream, sent piece by
 * piece through a native inserter. Raw IPC bytes pass through as they are
 * (checked in Rust: `ArrowInserter::insert_ipc`).
 * `apache-arrow` tables and record batches (or a sync or async iterable of
 * batches) go one batch at a time, so nothing is whole in memory, and the
 * native layer sends a batch while the next is handed over: batches of
 * flat types as their buffers (copied by the native layer, no JS work a
 * value), any other batch written as IPC by apache-arrow.
 *
 * Batches go in pieces of at most `DEFAULT_BATCH_ROWS` rows: hyperd
 * stores one 10M-row batch ~50 % slower than the same rows in 64K-row
 * batches (measured). Pieces handed over as buffers also end at
 * `BATCH_UNITS` bytes of text and binary values: 70,000 rows of 10 KB
 * text went in 1.4 s instead of 4.0 s as 16 MiB pieces rather than one
 * 640 MB one.
 */
import type { Data, RecordBatch, Schema, Table } from 'apache-arrow'
import type { NativeArrowColumn, NativeInserter } from './native'
import { call, ErrorCode, HyperError } from './errors'
import { arrowModules, type Arrow } from './arrow-module'
import { DEFAULT_BATCH_ROWS } from './inserter'
import { BATCH_UNITS } from './insert-columns'

/** Arrow data for `insertArrow`. */
export type ArrowInsertData =
  | Table
  | RecordBatch
  | Uint8Array
  | Iterable<RecordBatch>
  | AsyncIterable<RecordBatch>
  | Iterable<Uint8Array>
  | AsyncIterable<Uint8Array>

function notArrow(what: string): HyperError {
  return new HyperError({
    code: ErrorCode.INVALID_PARAMETER_VALUE,
    message:
      `insertArrow takes an apache-arrow Table, a RecordBatch, a sync or async iterable of RecordBatches, ` +
      `or Arrow IPC stream bytes (a Uint8Array or an iterable of them), not ${what}`,
  })
}

/** Writes `data` into `inserter`; whether anything was sent. */
export async function sendArrow(inserter: NativeInserter, data: ArrowInsertData): Promise<boolean> {
  if (data instanceof Uint8Array) {
    await call(inserter.sendIpc(data))
    return true
  }
  const modules = await arrowModules()
  const arrow = modules.find((a) => data instanceof a.Table || data instanceof a.RecordBatch)
  if (arrow !== undefined) {
    const batches = data instanceof arrow.Table ? (data as Table).batches : [data as RecordBatch]
    return sendBatches(inserter, batches, modules, { arrow, schema: (data as Table | RecordBatch).schema })
  }
  if (typeof data === 'object' && data !== null && (Symbol.iterator in data || Symbol.asyncIterator in data)) {
    return sendBatches(inserter, data as Iterable<RecordBatch | Uint8Array>, modules)
  }
  throw notArrow(Object.prototype.toString.call(data))
}

/**
 * Sends each item: IPC bytes as they are, batches as messages of one
 * stream. Data without rows (a Table without batches, whose schema is
 * `first`, or only empty batches) still has its schema checked against
 * the table.
 */
async function sendBatches(
  inserter: NativeInserter,
  items: Iterable<RecordBatch | Uint8Array> | AsyncIterable<RecordBatch | Uint8Array>,
  modules: Arrow[],
  first?: { arrow: Arrow; schema: Schema },
): Promise<boolean> {
  let stream: OneStream | undefined
  const buffers = new BufferHandover()
  let bytes = false
  let sent = false
  for await (const item of items) {
    if (item instanceof Uint8Array) {
      if (stream !== undefined) throw notArrow('IPC bytes mixed with RecordBatches')
      bytes = true
      await call(inserter.sendIpc(item))
      continue
    }
    const arrow = modules.find((a) => item instanceof a.RecordBatch)
    if (arrow === undefined || bytes) throw notArrow(bytes ? 'RecordBatches mixed with IPC bytes' : 'that item')
    first ??= { arrow, schema: item.schema }
    const at = differingField(first.schema, item.schema)
    if (at >= 0) throw otherSchema(first.schema, item.schema, at)
    // No rows, nothing to send: apache-arrow's empty batches have no value buffers.
    if (item.numRows === 0) continue
    if (buffers.flat(arrow, item.schema)) {
      sent = true
      await buffers.send(arrow, inserter, item)
      continue
    }
    // Not flat, so neither was any batch before (same types): one stream.
    sent = true
    stream ??= new OneStream(arrow)
    for (const part of slices(item)) {
      await call(inserter.sendIpc(stream.next(part)))
    }
  }
  if (stream !== undefined) await call(inserter.sendIpc(EOS))
  if (!bytes && !sent && first !== undefined) {
    // A stream of the schema alone: the table checks it, and no row goes.
    // It counts as sent: its refusal may come after these calls return,
    // and only `finish` waits for it (an abort would drop it).
    await call(inserter.sendIpc(schemaMessage(first.arrow, first.schema)))
    await call(inserter.sendIpc(EOS))
    return true
  }
  return bytes || sent
}

/**
 * The first field of `batch` whose name or type is not `first`'s, -1 when
 * none is: every batch of one insert has the first one's columns, also a
 * batch without rows (which is not sent, so the table never sees it).
 */
function differingField(first: Schema, batch: Schema): number {
  if (first === batch) return -1
  const n = Math.max(first.fields.length, batch.fields.length)
  for (let i = 0; i < n; i++) {
    const [a, b] = [first.fields[i], batch.fields[i]]
    if (a?.name !== b?.name || String(a?.type) !== String(b?.type)) return i
  }
  return -1
}

/** A batch whose schema is not the first batch's, told by its field `at`. */
function otherSchema(first: Schema, batch: Schema, at: number): HyperError {
  const [was, is] = [first.fields[at], batch.fields[at]]
  const told = (f: typeof was) => (f === undefined ? 'missing' : `\`${f.name}\` ${String(f.type)}`)
  return new HyperError({
    code: ErrorCode.DATATYPE_MISMATCH,
    message:
      `insertArrow: every batch of one insert must have the schema of the first: column ${at + 1} is ` +
      `${told(is)} in a later batch, ${told(was)} in the first`,
    column: is?.name ?? was?.name,
  })
}

/**
 * Batches handed over as their buffers. apache-arrow's `Data` holds
 * values and offsets from its row 0, and bitmaps with `offset` bits
 * before row 0 (a slice shares its parent's bitmaps).
 */
class BufferHandover {
  private schema?: Schema
  private message?: Uint8Array

  /** Whether every field has a flat layout (no dictionary, list, ...). */
  flat(arrow: Arrow, schema: Schema): boolean {
    const { Type } = arrow
    const flatTypes = new Set<number>([
      Type.Int,
      Type.Float,
      Type.Binary,
      Type.Utf8,
      Type.Bool,
      Type.Decimal,
      Type.Date,
      Type.Time,
      Type.Timestamp,
      Type.Interval,
    ])
    return schema.fields.every((f) => flatTypes.has(f.typeId))
  }

  async send(arrow: Arrow, inserter: NativeInserter, batch: RecordBatch): Promise<void> {
    if (batch.schema !== this.schema) {
      this.message = schemaMessage(arrow, batch.schema)
      this.schema = batch.schema
    }
    const columns = batch.data.children.map(column)
    for (let at = 0, rows = 0; at < batch.numRows; at += rows) {
      rows = rowsWithin(columns, at, Math.min(DEFAULT_BATCH_ROWS, batch.numRows - at))
      await call(() => inserter.sendArrow(this.message as Uint8Array, at, rows, columns))
    }
  }
}

/**
 * Rows from `at`, at most `most` and at least one, whose text and binary
 * values hold at most `BATCH_UNITS` bytes: the native layer copies what a
 * call hands over, so a call's memory stays that of a row inserter's
 * batch however wide the rows.
 */
export function rowsWithin(columns: readonly Pick<NativeArrowColumn, 'offsets'>[], at: number, most: number): number {
  let rows = most
  for (const { offsets: o } of columns) {
    if (o === undefined || o[at + rows] - o[at] <= BATCH_UNITS) continue
    // The most rows that fit, by bisection over the offsets.
    let lo = 1
    let hi = rows
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (o[at + mid] - o[at] <= BATCH_UNITS) lo = mid
      else hi = mid - 1
    }
    rows = lo
  }
  return rows
}

function column(d: Data): NativeArrowColumn {
  const values = d.values as ArrayBufferView
  return {
    bitOffset: d.offset,
    validity: d.nullCount !== 0 && d.nullBitmap !== undefined && d.nullBitmap.length > 0 ? d.nullBitmap : undefined,
    offsets: d.valueOffsets as Int32Array | undefined,
    values: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
  }
}

/** The end-of-stream marker: continuation, then a zero length. */
const EOS = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])

/**
 * Batches as the consecutive bytes of one IPC stream. apache-arrow writes
 * whole streams (its stream writer keeps every byte it wrote until it is
 * closed), so each batch is written as a stream of its own and cut: the
 * first keeps its schema message, every one loses its end marker, and the
 * later ones lose the schema message too, which must be the first's.
 */
class OneStream {
  private schema?: Uint8Array

  constructor(private readonly arrow: Arrow) {}

  next(batch: RecordBatch): Uint8Array {
    const { tableToIPC, Table } = this.arrow
    const whole = tableToIPC(new Table([batch]), 'stream')
    const end = whole.length - EOS.length
    if (this.schema === undefined) {
      this.schema = schemaMessage(this.arrow, batch.schema)
      if (!startsWith(whole, this.schema)) throw notArrow('a batch apache-arrow wrote unexpectedly')
      return whole.subarray(0, end)
    }
    if (!startsWith(whole, this.schema)) {
      throw new HyperError({
        code: ErrorCode.DATATYPE_MISMATCH,
        message: 'insertArrow: every batch of one insert must have the schema of the first',
      })
    }
    return whole.subarray(this.schema.length, end)
  }
}

/** `schema` as the one IPC schema message apache-arrow writes for it. */
function schemaMessage(arrow: Arrow, schema: Schema): Uint8Array {
  const schemaOnly = arrow.tableToIPC(new arrow.Table(schema), 'stream')
  return schemaOnly.subarray(0, schemaOnly.length - EOS.length)
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && Buffer.compare(bytes.subarray(0, prefix.length), prefix) === 0
}

/** `batch` cut into slices of at most `DEFAULT_BATCH_ROWS` rows. */
function* slices(batch: RecordBatch): Generator<RecordBatch> {
  if (batch.numRows <= DEFAULT_BATCH_ROWS) {
    yield batch
    return
  }
  for (let at = 0; at < batch.numRows; at += DEFAULT_BATCH_ROWS) {
    yield batch.slice(at, at + DEFAULT_BATCH_ROWS)
  }
}

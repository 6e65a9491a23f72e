/**
 * Column batches from one native handover (`ColumnBatches` in
 * `src/columns.rs`): typed arrays viewing the handed-over memory (one
 * external array per allocation, not per column), one `ColumnData` per
 * column of each batch, which `columns.ts` reads.
 */
import { native, type ColumnBatches, type ColumnInfo } from './native'

/** Marks an absent buffer or text in a handover (see `src/handover.rs`). */
const ABSENT = native.ABSENT_BUFFER

/** Numbers in a column's entry of the layout: four buffer references and a text index. */
const COLUMN_ENTRY = 13

/**
 * One column of one batch. `kind` says which fields hold the values (see
 * `ColumnBatches` in `src/columns.rs`); `validity` is Arrow's bitmap, or
 * `null` when the batch has no NULL in the column.
 */
export interface ColumnData {
  kind: string
  validity: Uint8Array | null
  int16?: Int16Array
  int32?: Int32Array
  int64?: BigInt64Array
  uint32?: Uint32Array
  float32?: Float32Array
  float64?: Float64Array
  days?: Int32Array
  bytes?: Uint8Array
  offsets?: Int32Array
  text?: string
}

/** One batch of a result, column by column. */
export interface ColumnBatch {
  numRows: number
  columns: ColumnData[]
}

type View<T> = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T
  new (length: number): T
  readonly BYTES_PER_ELEMENT: number
}

/** The field and array type a column's values buffer is viewed as, by kind. */
const VALUES: Record<string, [keyof ColumnData, View<ArrayBufferView>]> = {
  int16: ['int16', Int16Array],
  int32: ['int32', Int32Array],
  int64: ['int64', BigInt64Array],
  time: ['int64', BigInt64Array],
  timestamp: ['int64', BigInt64Array],
  timestamptz: ['int64', BigInt64Array],
  uint32: ['uint32', Uint32Array],
  float32: ['float32', Float32Array],
  float64: ['float64', Float64Array],
  date: ['float64', Float64Array],
  bool: ['bytes', Uint8Array],
  // Months; the days and microseconds follow.
  interval: ['int32', Int32Array],
  bytes: ['bytes', Uint8Array],
}

/** Kinds whose values are sliced by offsets (of bytes, or of UTF-16 text). */
const OFFSETS = new Set(['text', 'json', 'numeric', 'bytes'])

/** The batches of one handover, for a result of columns `infos`. */
export function columnBatches(infos: readonly ColumnInfo[], h: ColumnBatches): ColumnBatch[] {
  const { memory, layout, text } = h
  // A buffer reference is (memory index, byte offset, byte length); an
  // absent one is an empty array (a batch of no rows).
  const view = <T>(T: View<T>, k: number): T => {
    const m = layout[k]
    if (m === ABSENT) return new T(0)
    const region = memory[m]
    return new T(region.buffer, region.byteOffset + layout[k + 1], layout[k + 2] / T.BYTES_PER_ELEMENT)
  }
  const out: ColumnBatch[] = []
  let k = 0
  while (k < layout.length) {
    const numRows = layout[k++]
    const columns: ColumnData[] = new Array(infos.length)
    for (let j = 0; j < infos.length; j++, k += COLUMN_ENTRY) {
      const kind = infos[j].kind
      const c: ColumnData = { kind, validity: layout[k] === ABSENT ? null : view(Uint8Array, k) }
      const into = VALUES[kind]
      // `VALUES` pairs each field with its own array type.
      if (into !== undefined) c[into[0]] = view(into[1], k + 3) as never
      if (kind === 'interval') {
        c.days = view(Int32Array, k + 6)
        c.int64 = view(BigInt64Array, k + 9)
      } else if (OFFSETS.has(kind)) {
        c.offsets = view(Int32Array, k + 6)
      }
      if (layout[k + 12] !== ABSENT) c.text = text[layout[k + 12]]
      columns[j] = c
    }
    out.push({ numRows, columns })
  }
  return out
}

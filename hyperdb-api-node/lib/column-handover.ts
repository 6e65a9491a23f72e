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
      const [values, offsets, micros] = [k + 3, k + 6, k + 9]
      switch (kind) {
        case 'int16':
          c.int16 = view(Int16Array, values)
          break
        case 'int32':
          c.int32 = view(Int32Array, values)
          break
        case 'int64':
        case 'time':
        case 'timestamp':
        case 'timestamptz':
          c.int64 = view(BigInt64Array, values)
          break
        case 'uint32':
          c.uint32 = view(Uint32Array, values)
          break
        case 'float32':
          c.float32 = view(Float32Array, values)
          break
        case 'float64':
        case 'date':
          c.float64 = view(Float64Array, values)
          break
        case 'bool':
          c.bytes = view(Uint8Array, values)
          break
        case 'interval':
          c.int32 = view(Int32Array, values)
          c.days = view(Int32Array, offsets)
          c.int64 = view(BigInt64Array, micros)
          break
        case 'text':
        case 'json':
        case 'numeric':
          c.offsets = view(Int32Array, offsets)
          c.text = text[layout[k + 12]]
          break
        case 'bytes':
          c.bytes = view(Uint8Array, values)
          c.offsets = view(Int32Array, offsets)
          break
      }
      columns[j] = c
    }
    out.push({ numRows, columns })
  }
  return out
}

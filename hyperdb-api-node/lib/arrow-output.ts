/**
 * Record batches for `queryArrow`, built from the decoded batches' own
 * buffers: `apache-arrow` `Data` over the native memory, without parsing
 * IPC in JavaScript (which cost ~130 us a batch, more than reading it).
 */
import type { Data, DataType, RecordBatch, Schema } from 'apache-arrow'
import { native, type ArrowBatches } from './native'
import type { Arrow } from './arrow-module'

/** Marks an absent buffer in `ArrowBatches.layout` (see `src/arrow_batches.rs`). */
const ABSENT = native.ABSENT_BUFFER

type ViewType = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): ArrayBufferView } & {
  readonly BYTES_PER_ELEMENT: number
}

/** How one column's buffers become its `Data`. */
interface ColumnPlan {
  type: DataType
  /** The typed array of its values (bytes, after offsets, for text and binary). */
  values: ViewType
  /** A list's (an ARRAY's) values, which follow its offsets in the layout. */
  child?: ColumnPlan
}

/** The plan of a column of `type` (see `ArrowBatches` in `src/arrow_batches.rs`). */
function planOf(arrow: Arrow, type: DataType): ColumnPlan {
  if (arrow.DataType.isList(type)) {
    return { type, values: Int32Array, child: planOf(arrow, type.children[0].type) }
  }
  return {
    type,
    values: arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type) ? Uint8Array : type.ArrayType,
  }
}

const EMPTY = new Uint8Array(0)

/** Turns one result's native batches into `RecordBatch`es of `schema`. */
export class BatchMaker {
  private readonly struct: DataType
  private readonly plans: ColumnPlan[]
  private readonly direct: boolean

  constructor(
    private readonly arrow: Arrow,
    readonly schema: Schema,
  ) {
    this.struct = new arrow.Struct(schema.fields)
    this.plans = schema.fields.map((f) => planOf(arrow, f.type))
    this.direct = isSchemaAndData(arrow)
  }

  /**
   * The schema message of a result (see `NativeBatchStream.arrowSchema`).
   * Read by a batch reader: `tableFromIPC` gives every field of a repeated
   * name (`SELECT t.id, u.id ...`) the last one's type, and the first
   * column's buffers were then read as the second's type.
   */
  static schemaOf(arrow: Arrow, message: Uint8Array): Schema {
    const reader = arrow.RecordBatchReader.from(message)
    reader.open()
    return reader.schema
  }

  /** The batches of one handover (see `ArrowBatches` in `src/arrow_batches.rs`). */
  batches(h: ArrowBatches): RecordBatch[] {
    const { arrow, plans } = this
    const { memory, layout } = h
    const out: RecordBatch[] = []
    // A buffer reference is (memory index, byte offset, byte length).
    const view = (T: ViewType, k: number): ArrayBufferView | undefined => {
      const m = layout[k]
      if (m === ABSENT) return undefined
      const region = memory[m]
      return new T(region.buffer, region.byteOffset + layout[k + 1], layout[k + 2] / T.BYTES_PER_ELEMENT)
    }
    let k = 0
    // One column of `length` values, from `k` on.
    const column = (plan: ColumnPlan, length: number): Data => {
      const nullCount = layout[k]
      const validity = view(Uint8Array, k + 1) ?? EMPTY
      const count = layout[k + 4]
      k += 5
      // The buffers as apache-arrow orders them: offsets, values, validity.
      const buffers =
        count === 2
          ? [view(Int32Array, k) ?? new Int32Array(1), view(Uint8Array, k + 3) ?? EMPTY, validity]
          : plan.child !== undefined
            ? [view(Int32Array, k) ?? new Int32Array(1), undefined, validity]
            : [undefined, view(plan.values, k) ?? new plan.values(new ArrayBuffer(0), 0, 0), validity]
      k += 3 * count
      let children: Data[] | undefined
      if (plan.child !== undefined) {
        const values = layout[k++]
        children = [column(plan.child, values)]
      }
      return new arrow.Data(plan.type, 0, length, nullCount, buffers as never, children as never)
    }
    while (k < layout.length) {
      const length = layout[k++]
      const children: Data[] = new Array(plans.length)
      for (let j = 0; j < plans.length; j++) {
        children[j] = column(plans[j], length)
      }
      out.push(this.recordBatch(new arrow.Data(this.struct, 0, length, 0, [undefined, undefined, EMPTY], children)))
    }
    return out
  }

  private recordBatch(data: Data): RecordBatch {
    if (!this.direct) {
      return new this.arrow.RecordBatch(this.schema, data as never)
    }
    const batch = Object.create(this.arrow.RecordBatch.prototype) as { schema: Schema; data: Data }
    batch.schema = this.schema
    batch.data = data
    return batch as unknown as RecordBatch
  }
}

/** `isSchemaAndData`'s answer for each apache-arrow module loaded. */
const schemaAndData = new WeakMap<Arrow, boolean>()

/**
 * Whether a `RecordBatch` is its `schema` and `data` and nothing else (so
 * in apache-arrow 15 to 21): then batches are made without the
 * constructor, which rebuilds the schema and the struct `Data` of every
 * batch to check lengths that are equal by construction here (~3 us of
 * ~5 a batch, measured). Checked once per apache-arrow module on an empty
 * batch, so a version that adds state falls back to the constructor.
 */
function isSchemaAndData(arrow: Arrow): boolean {
  let known = schemaAndData.get(arrow)
  if (known === undefined) {
    const field = new arrow.Field('x', new arrow.Int32())
    const child = arrow.makeData({ type: field.type, length: 0, nullCount: 0 } as never)
    const struct = arrow.makeData({
      type: new arrow.Struct([field]),
      length: 0,
      nullCount: 0,
      children: [child],
    } as never)
    const keys = Object.keys(new arrow.RecordBatch(new arrow.Schema([field]), struct as never))
    known = keys.length === 2 && keys.includes('schema') && keys.includes('data')
    schemaAndData.set(arrow, known)
  }
  return known
}

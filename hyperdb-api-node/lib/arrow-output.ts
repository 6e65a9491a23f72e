/**
 * Record batches for `queryArrow`, built from the decoded batches' own
 * buffers: `apache-arrow` `Data` over the native memory, without parsing
 * IPC in JavaScript (which cost ~130 us a batch, more than reading it).
 */
import type { Data, RecordBatch, Schema } from 'apache-arrow'
import type { ArrowBatch } from './native'
import type { Arrow } from './queries'

/** Turns one result's native batches into `RecordBatch`es of `schema`. */
export class BatchMaker {
  private readonly struct: InstanceType<Arrow['Struct']>

  constructor(
    private readonly arrow: Arrow,
    readonly schema: Schema,
  ) {
    this.struct = new arrow.Struct(schema.fields)
  }

  /** The schema message of a result (see `NativeBatchStream.arrowSchema`). */
  static schemaOf(arrow: Arrow, message: Uint8Array): Schema {
    return arrow.tableFromIPC(message).schema
  }

  batch(b: ArrowBatch): RecordBatch {
    const { arrow, schema } = this
    const length = b.numRows
    const children: Data[] = new Array(b.columns.length)
    for (let j = 0; j < b.columns.length; j++) {
      const c = b.columns[j]
      const buffers = c.buffers
      // Uint8Arrays over whole ArrayBuffers: makeData views them as the
      // type's own array without a copy.
      children[j] =
        buffers.length === 2
          ? arrow.makeData({
              type: schema.fields[j].type,
              length,
              nullCount: c.nullCount,
              nullBitmap: c.validity,
              valueOffsets: buffers[0],
              data: buffers[1],
            } as never)
          : arrow.makeData({
              type: schema.fields[j].type,
              length,
              nullCount: c.nullCount,
              nullBitmap: c.validity,
              data: buffers[0],
            } as never)
    }
    return new arrow.RecordBatch(schema, arrow.makeData({ type: this.struct, length, nullCount: 0, children }))
  }
}

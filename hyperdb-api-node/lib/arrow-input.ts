/**
 * What `insertArrow` takes, as the bytes of one Arrow IPC stream: raw IPC
 * bytes pass through; `apache-arrow` tables and batches are written by
 * apache-arrow itself (`tableToIPC`, stream format).
 */
import type { RecordBatch, Table } from 'apache-arrow'
import { ErrorCode, HyperError } from './errors'
import { loadArrow, type Arrow } from './queries'

/** Arrow data for `insertArrow`. */
export type ArrowInsertData = Table | RecordBatch | readonly RecordBatch[] | Uint8Array | readonly Uint8Array[]

function isBytes(v: unknown): v is Uint8Array {
  return v instanceof Uint8Array
}

/**
 * Every `apache-arrow` module instance a caller may have made `data` with:
 * its ES module build and its CommonJS build are separate instances with
 * separate classes, and `instanceof` tells only its own apart.
 */
async function arrowModules(): Promise<Arrow[]> {
  const modules: Arrow[] = [await loadArrow()]
  try {
    const cjs = require('apache-arrow') as Arrow
    if (cjs !== modules[0]) modules.push(cjs)
  } catch {
    // Only the ES module build is installed.
  }
  return modules
}

export async function ipcChunks(data: ArrowInsertData): Promise<Uint8Array[]> {
  if (isBytes(data)) {
    return [data]
  }
  if (Array.isArray(data) && data.every(isBytes)) {
    return [...(data as readonly Uint8Array[])]
  }
  for (const arrow of await arrowModules()) {
    let table: Table | undefined
    if (data instanceof arrow.Table) {
      table = data
    } else if (data instanceof arrow.RecordBatch) {
      table = new arrow.Table([data])
    } else if (Array.isArray(data) && data.length > 0 && data.every((b) => b instanceof arrow.RecordBatch)) {
      table = new arrow.Table(data as RecordBatch[])
    }
    if (table !== undefined) {
      return [arrow.tableToIPC(table, 'stream')]
    }
  }
  throw new HyperError({
    code: ErrorCode.INVALID_PARAMETER_VALUE,
    message: 'insertArrow takes an apache-arrow Table, a RecordBatch or an array of them, or Arrow IPC stream bytes',
  })
}

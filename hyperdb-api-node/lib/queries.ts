/**
 * The read side every connection type shares (`Connection` over the
 * PostgreSQL protocol, `GrpcConnection` over gRPC): each read style is
 * written once, over the two native stream kinds a connection opens.
 */
import type { RecordBatch, Table } from 'apache-arrow'
import type { ArrowBatch, ColumnBatch, NativeBatchStream, NativeCancelToken, NativeIpcStream, Param } from './native'
import { native } from './native'
import { call, canceledError, HyperError } from './errors'
import { toParams, type ParamValue } from './params'
import {
  columnChunk,
  resultColumns,
  RowAssembler,
  type ColumnChunk,
  type HyperValue,
  type ResultColumn,
  type RowArray,
  type RowObject,
  type ValueOptions,
} from './columns'
import { BatchMaker } from './arrow-output'
import { eachItem, NativeReader, throwIfAborted, type NativeStream } from './streams'

export interface QueryOptions extends ValueOptions {
  /** Cancels the statement on the server; the iteration rejects with code 57014. */
  signal?: AbortSignal
}

export interface RowQueryOptions extends QueryOptions {
  /** Rows as objects keyed by column name (default) or as arrays in column order. */
  rowMode?: 'object' | 'array'
}

export type Arrow = typeof import('apache-arrow')

let arrowModule: Promise<Arrow> | undefined

/** `apache-arrow`, the peer dependency, loaded on first use. */
export function loadArrow(): Promise<Arrow> {
  arrowModule ??= import('apache-arrow').catch((e: unknown) => {
    arrowModule = undefined
    throw new HyperError({
      code: '58000',
      message: 'queryArrow needs the apache-arrow package: npm install apache-arrow',
      cause: e,
    })
  })
  return arrowModule
}

export abstract class Queries {
  /**
   * Starts a query whose result comes as column batches. Its place among
   * the connection's calls is taken when this is called; `token` cancels
   * it, waiting or running.
   */
  protected abstract openBatches(sql: string, params: Param[], token?: NativeCancelToken): Promise<NativeBatchStream>

  /** Starts a query whose result comes as Arrow IPC bytes (see `openBatches`). */
  protected abstract openIpc(sql: string, params: Param[], token?: NativeCancelToken): Promise<NativeIpcStream>

  /**
   * Opens a stream with `open`, watching `signal` meanwhile: an abort
   * cancels the query (still waiting for its turn, or already running on
   * the server) and rejects at once; a stream that opens after that is
   * abandoned.
   */
  private async opened<S extends { close(): void }>(
    open: (token?: NativeCancelToken) => Promise<S>,
    signal: AbortSignal | undefined,
  ): Promise<S> {
    throwIfAborted(signal)
    if (signal === undefined) {
      return call(() => open())
    }
    const token = new native.NativeCancelToken()
    const opening = call(() => open(token))
    return new Promise<S>((resolve, reject) => {
      const onAbort = () => {
        token.cancel().catch(() => {})
        opening.then((s) => s.close()).catch(() => {})
        reject(canceledError(signal.reason))
      }
      signal.addEventListener('abort', onAbort, { once: true })
      opening.then(
        (s) => {
          signal.removeEventListener('abort', onAbort)
          if (signal.aborted) {
            s.close()
            reject(canceledError(signal.reason))
          } else {
            resolve(s)
          }
        },
        (e) => {
          signal.removeEventListener('abort', onAbort)
          reject(signal.aborted ? canceledError(signal.reason) : e)
        },
      )
    })
  }

  /** Starts a query; resolves once its columns are known. */
  private async start(sql: string, params: readonly ParamValue[] | undefined, signal: AbortSignal | undefined) {
    const args = toParams(params)
    const stream = await this.opened((token) => this.openBatches(sql, args, token), signal)
    return { stream, reader: new NativeReader<ColumnBatch>(stream, signal) }
  }

  /**
   * Streams the rows of a query, with memory bounded whatever its size:
   * `for await (const row of conn.query(sql))`. Leaving the loop early
   * abandons the rest at once.
   */
  query(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' },
  ): AsyncIterableIterator<RowObject>
  query(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): AsyncIterableIterator<RowArray>
  query(sql: string, params?: readonly ParamValue[], options: RowQueryOptions = {}): AsyncIterableIterator<unknown> {
    return new RowIterator(this.queryChunks(sql, params, options as RowQueryOptions & { rowMode: 'object' }))
  }

  /** `query`'s rows a chunk (an array of rows) at a time: fewer awaits for fast loops. */
  queryChunks(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' },
  ): AsyncIterableIterator<RowObject[]>
  queryChunks(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): AsyncIterableIterator<RowArray[]>
  async *queryChunks(
    sql: string,
    params?: readonly ParamValue[],
    options: RowQueryOptions = {},
  ): AsyncIterableIterator<unknown[]> {
    const { stream, reader } = await this.start(sql, params, options.signal)
    const assembler = new RowAssembler(stream.columns, options.rowMode ?? 'object', options)
    // One batch's rows at a time: they die young, in V8's cheapest
    // collection (a handover's worth at once was promoted, and the
    // collector took half the time of a 10M-row read).
    for await (const batch of eachItem(reader)) {
      yield assembler.rows(batch)
    }
  }

  /** Every row of a (small) result, as an array. */
  async queryAll(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' },
  ): Promise<RowObject[]>
  async queryAll(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): Promise<RowArray[]>
  async queryAll(sql: string, params?: readonly ParamValue[], options: RowQueryOptions = {}): Promise<unknown[]> {
    const all: unknown[] = []
    for await (const rows of this.queryChunks(sql, params, options as RowQueryOptions & { rowMode: 'object' })) {
      for (let i = 0; i < rows.length; i++) all.push(rows[i])
    }
    return all
  }

  /** The first row, or `null` when there is none; the rest is discarded. */
  async queryOne(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' },
  ): Promise<RowObject | null>
  async queryOne(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): Promise<RowArray | null>
  async queryOne(sql: string, params?: readonly ParamValue[], options: RowQueryOptions = {}): Promise<unknown> {
    for await (const row of this.query(sql, params, options as RowQueryOptions & { rowMode: 'object' })) {
      return row
    }
    return null
  }

  /** The first column of the first row; a `HyperError` (02000) when there is no row. */
  async queryScalar(sql: string, params?: readonly ParamValue[], options: QueryOptions = {}): Promise<HyperValue> {
    const row = await this.queryOne(sql, params, { ...options, rowMode: 'array' })
    if (row === null) {
      throw new HyperError({ code: '02000', message: 'the query returned no rows' })
    }
    return row[0]
  }

  /**
   * Streams a query's result column by column: one `ColumnChunk` per
   * batch, its numeric columns TypedArrays over the received memory.
   */
  async *queryColumns(
    sql: string,
    params?: readonly ParamValue[],
    options: QueryOptions = {},
  ): AsyncIterableIterator<ColumnChunk> {
    const { stream, reader } = await this.start(sql, params, options.signal)
    const infos = stream.columns
    for await (const batch of eachItem(reader)) {
      yield columnChunk(infos, batch, options)
    }
  }

  /** A query's columns (names and types) without reading its rows. */
  async describe(sql: string, params?: readonly ParamValue[]): Promise<ResultColumn[]> {
    const { stream, reader } = await this.start(sql, params, undefined)
    reader.close()
    return resultColumns(stream.columns)
  }

  /**
   * Streams a query's result as raw Arrow IPC bytes: one IPC stream
   * (schema first, end-of-stream marker last) in chunks, over the received
   * memory. For callers that forward or decode Arrow themselves.
   */
  async *queryArrowIpc(
    sql: string,
    params?: readonly ParamValue[],
    options: QueryOptions = {},
  ): AsyncIterableIterator<Uint8Array> {
    const args = toParams(params)
    const stream = await this.opened((token) => this.openIpc(sql, args, token), options.signal)
    yield* eachItem(new NativeReader<Uint8Array>(stream, options.signal))
  }

  /** Streams a query's result as `apache-arrow` `RecordBatch`es (a peer dependency). */
  async *queryArrow(
    sql: string,
    params?: readonly ParamValue[],
    options: QueryOptions = {},
  ): AsyncIterableIterator<RecordBatch> {
    const arrow = await loadArrow()
    const args = toParams(params)
    const stream = await this.opened((token) => this.openBatches(sql, args, token), options.signal)
    const maker = new BatchMaker(arrow, BatchMaker.schemaOf(arrow, stream.arrowSchema()))
    const native: NativeStream<ArrowBatch> = {
      next: () => stream.nextArrow(),
      cancel: () => stream.cancel(),
      close: () => stream.close(),
    }
    for await (const batch of eachItem(new NativeReader(native, options.signal))) {
      yield maker.batch(batch)
    }
  }

  /** A query's whole result as one `apache-arrow` `Table`. */
  async queryArrowTable(sql: string, params?: readonly ParamValue[], options: QueryOptions = {}): Promise<Table> {
    const arrow = await loadArrow()
    const batches: RecordBatch[] = []
    for await (const b of this.queryArrow(sql, params, options)) batches.push(b)
    if (batches.length === 0) {
      return new arrow.Table()
    }
    return new arrow.Table(batches)
  }
}

/**
 * Rows one at a time over `queryChunks`: a plain iterator instead of an
 * async generator, which costs a generator resumption per row on top of
 * the Promise `for await` needs anyway (~1.5x faster per row, measured).
 */
class RowIterator implements AsyncIterableIterator<unknown> {
  private rows: unknown[] = []
  private i = 0

  constructor(private readonly chunks: AsyncIterableIterator<unknown[]>) {}

  next(): Promise<IteratorResult<unknown>> {
    if (this.i < this.rows.length) {
      return Promise.resolve({ value: this.rows[this.i++], done: false })
    }
    return this.refill()
  }

  private async refill(): Promise<IteratorResult<unknown>> {
    for (;;) {
      const next = await this.chunks.next()
      if (next.done === true) {
        this.rows = []
        return { value: undefined, done: true }
      }
      if (next.value.length > 0) {
        this.rows = next.value
        this.i = 1
        return { value: this.rows[0], done: false }
      }
    }
  }

  /** Leaving a `for await` early abandons the rest of the result. */
  async return(value?: unknown): Promise<IteratorResult<unknown>> {
    this.rows = []
    await this.chunks.return?.(undefined)
    return { value, done: true }
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    return this
  }
}

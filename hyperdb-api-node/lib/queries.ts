/**
 * The read side every connection type shares (`Connection` over the
 * PostgreSQL protocol, `GrpcConnection` over gRPC): each read style is
 * written once, over the two native stream kinds a connection opens.
 */
import type { RecordBatch, Schema, Table } from 'apache-arrow'
import type { ColumnInfo, NativeBatchStream, NativeCancelToken, NativeIpcStream, Param } from './native'
import { columnBatches, type ColumnBatch } from './column-handover'
import { native } from './native'
import { call, callSync, canceledError, ErrorCode, HyperError, invalidArgument } from './errors'
import { checkOptions, isRecord, kindOf, shown } from './options'
import { statementParams, type ParamValue } from './params'
import {
  columnChunk,
  resultColumns,
  RowAssembler,
  type RowMaker,
  type ColumnChunk,
  type HyperValue,
  type ResultColumn,
  type RowArray,
  type RowObject,
  type ValueOptions,
} from './columns'
import { BatchMaker } from './arrow-output'
import { loadArrow, type Arrow } from './arrow-module'
import {
  eachItem,
  loopBudgetSpent,
  loopTurn,
  NativeReader,
  nextAfterOpen,
  throwIfAborted,
  type NativeStream,
} from './streams'

/** The options of the Arrow reads (`queryArrow`, `queryArrowTable`, `queryArrowIpc`). */
export interface ArrowQueryOptions {
  /** Cancels the statement on the server; the iteration rejects with code 57014. */
  signal?: AbortSignal | undefined
}

/** The options of the reads that make JS values (`queryColumns`, `queryScalar`). */
export interface QueryOptions extends ArrowQueryOptions, ValueOptions {}

export interface RowQueryOptions extends QueryOptions {
  /** Rows as objects keyed by column name (default) or as arrays in column order. */
  rowMode?: 'object' | 'array' | undefined
}

/** The options each kind of read takes. */
const ROW_OPTIONS = ['signal', 'bigint', 'rowMode']
const VALUE_OPTIONS = ['signal', 'bigint']
const ARROW_OPTIONS = ['signal']

/**
 * Refuses read options that would otherwise be ignored: a misspelt
 * `rowMode` gave objects, a misspelt `bigint` bigints, a `signal` that is
 * not an `AbortSignal` a TypeError from deep inside, and an option the
 * read has no use for (`rowMode` of `queryColumns`, `bigint` of the Arrow
 * reads, whose BIGINTs are Arrow's) was taken and did nothing.
 */
function checkReadOptions(options: RowQueryOptions, known: readonly string[], what: string): void {
  checkOptions(options, known, what)
  const { rowMode, bigint, signal } = options
  if (rowMode !== undefined && rowMode !== 'object' && rowMode !== 'array') {
    throw invalidArgument(`rowMode is 'object' or 'array', not ${shown(rowMode)}`)
  }
  if (bigint !== undefined && bigint !== 'bigint' && bigint !== 'number') {
    throw invalidArgument(`bigint is 'bigint' or 'number', not ${shown(bigint)}`)
  }
  checkSignal(signal)
}

/**
 * Runs the native call `start`, watching `signal` meanwhile: an abort
 * cancels the call (still waiting for its turn, or already running on the
 * server). A read rejects at once with 57014, and what the call gives
 * after that goes to `abandon`. A write (`settle: 'outcome'`) settles as
 * the call does: 57014 when it was cancelled (it stored nothing), its
 * result when it had completed before the cancel reached it, as a caller
 * that retries on 57014 must know (rejected at once, a write that had
 * already stored its rows was reported cancelled).
 */
export function watched<T>(
  start: (token?: NativeCancelToken) => Promise<T>,
  signal: AbortSignal | undefined,
  abandon: (value: T) => void = () => {},
  settle: 'at-once' | 'outcome' = 'at-once',
): Promise<T> {
  throwIfAborted(signal)
  if (signal === undefined) {
    return call(() => start())
  }
  const token = new native.NativeCancelToken()
  const running = call(() => start(token))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      token.cancel().catch(() => {})
      if (settle === 'outcome') return
      running.then(abandon).catch(() => {})
      reject(canceledError(signal.reason))
    }
    signal.addEventListener('abort', onAbort, { once: true })
    running.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        if (signal.aborted && settle === 'at-once') {
          abandon(value)
          reject(canceledError(signal.reason))
        } else {
          resolve(value)
        }
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        const cancelled = signal.aborted && (settle === 'at-once' || isCancel(e))
        reject(cancelled ? canceledError(signal.reason) : e)
      },
    )
  })
}

function isCancel(e: unknown): boolean {
  return e instanceof HyperError && e.code === ErrorCode.QUERY_CANCELED
}

/** Refuses a `signal` option that is not an `AbortSignal`. */
export function checkSignal(signal: unknown): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw invalidArgument(`the signal option is an AbortSignal, not ${kindOf(signal)}`)
  }
}

export abstract class Queries {
  /**
   * Starts a query whose result comes as column batches. Its place among
   * the connection's calls is taken when this is called; `token` cancels
   * it, waiting or running. `forRows`: the batches are made into rows,
   * which take timestamps past Arrow's range (see `timestampMicros`).
   */
  protected abstract openBatches(
    sql: string,
    params: Param[],
    token?: NativeCancelToken,
    forRows?: boolean,
  ): Promise<NativeBatchStream>

  /** Starts a query whose result comes as Arrow IPC bytes (see `openBatches`). */
  protected abstract openIpc(sql: string, params: Param[], token?: NativeCancelToken): Promise<NativeIpcStream>

  /**
   * Opens a stream with `open`, watching `signal` meanwhile (see
   * `watched`); a stream that opens after an abort is closed.
   */
  private opened<S extends { close(): void }>(
    open: (token?: NativeCancelToken) => Promise<S>,
    signal: AbortSignal | undefined,
  ): Promise<S> {
    return watched(open, signal, (s) => s.close())
  }

  /** Starts a query; resolves once its columns are known. */
  private async start(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions,
    forRows: boolean,
  ) {
    checkReadOptions(options, forRows ? ROW_OPTIONS : VALUE_OPTIONS, forRows ? 'a query' : 'queryColumns')
    const args = statementParams(sql, params)
    const stream = await this.opened((token) => this.openBatches(sql, args, token, forRows), options.signal)
    let infos: ColumnInfo[]
    try {
      // Fails (0A000) for a column only `queryArrow` reads (an ARRAY).
      infos = callSync(() => stream.columns)
    } catch (e) {
      stream.close()
      throw e
    }
    const batches: NativeStream<ColumnBatch> = {
      next: nextAfterOpen(
        stream,
        () => stream.takeFirst(),
        () => stream.next(),
        (h) => columnBatches(infos, h),
      ),
      cancel: () => stream.cancel(),
      close: () => stream.close(),
    }
    return { infos, reader: new NativeReader(batches, options.signal) }
  }

  /**
   * Streams the rows of a query, with memory bounded whatever its size:
   * `for await (const row of conn.query(sql))`. Leaving the loop early
   * abandons the rest at once.
   */
  query(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' | undefined },
  ): AsyncIterableIterator<RowObject>
  query(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): AsyncIterableIterator<RowArray>
  /** With a `rowMode` known only at run time: either shape. */
  query(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions,
  ): AsyncIterableIterator<RowObject | RowArray>
  query(sql: string, params?: readonly ParamValue[], options: RowQueryOptions = {}): AsyncIterableIterator<unknown> {
    // Options that are no object (`null`) are refused at the first `next()`,
    // as a bad `rowMode` is, not read here first (a TypeError).
    const signal = isRecord(options) ? (options as RowQueryOptions).signal : undefined
    return new RowIterator(this.rowBatches(sql, params, options), signal)
  }

  /**
   * `query`'s rows a chunk (an array of at most 2,048 rows) at a time:
   * fewer awaits for fast loops.
   */
  queryChunks(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' | undefined },
  ): AsyncIterableIterator<RowObject[]>
  queryChunks(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): AsyncIterableIterator<RowArray[]>
  queryChunks(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions,
  ): AsyncIterableIterator<RowObject[] | RowArray[]>
  async *queryChunks(
    sql: string,
    params?: readonly ParamValue[],
    options: RowQueryOptions = {},
  ): AsyncIterableIterator<unknown[]> {
    for await (const { n, row } of this.rowBatches(sql, params, options)) {
      for (let start = 0; start < n; start += CHUNK_ROWS) {
        if (start > 0 && loopBudgetSpent()) await loopTurn()
        throwIfAborted(options.signal)
        const end = Math.min(n, start + CHUNK_ROWS)
        const rows: unknown[] = new Array(end - start)
        for (let i = start; i < end; i++) rows[i - start] = row(i)
        yield rows
      }
    }
  }

  /** The batches of a row query, each as its row count and maker. */
  private async *rowBatches(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions,
  ): AsyncIterableIterator<{ n: number; row: RowMaker }> {
    const { infos, reader } = await this.start(sql, params, options, true)
    const assembler = new RowAssembler(infos, options.rowMode ?? 'object', options)
    for await (const batch of eachItem(reader)) {
      yield { n: batch.numRows, row: assembler.rowMaker(batch) }
    }
  }

  /** Every row of a (small) result, as an array. */
  async queryAll(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' | undefined },
  ): Promise<RowObject[]>
  async queryAll(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): Promise<RowArray[]>
  async queryAll(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions,
  ): Promise<RowObject[] | RowArray[]>
  async queryAll(sql: string, params?: readonly ParamValue[], options: RowQueryOptions = {}): Promise<unknown[]> {
    const all: unknown[] = []
    await this.eachRows(sql, params, options, (row, from, to) => {
      for (let i = from; i < to; i++) all.push(row(i))
      return true
    })
    return all
  }

  /** The first row, or `null` when there is none; the rest is discarded. */
  async queryOne(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions & { rowMode?: 'object' | undefined },
  ): Promise<RowObject | null>
  async queryOne(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions & { rowMode: 'array' },
  ): Promise<RowArray | null>
  async queryOne(
    sql: string,
    params?: readonly ParamValue[],
    options?: RowQueryOptions,
  ): Promise<RowObject | RowArray | null>
  async queryOne(sql: string, params?: readonly ParamValue[], options: RowQueryOptions = {}): Promise<unknown> {
    let first: unknown = null
    await this.eachRows(sql, params, options, (row, from) => {
      first = row(from)
      return false
    })
    return first
  }

  /**
   * Hands a query's rows to `take`, as a maker and a range of at most
   * `CHUNK_ROWS` rows of one batch, until `take` returns false or the
   * result ends; the rest is then abandoned. The eager reads (`queryAll`,
   * `queryOne`, `queryScalar`) go through here rather than through
   * `query`'s iterator: a small result is one handover, read at the open,
   * and its rows are made without async generators between them and the
   * caller. The event loop gets a turn between ranges once its timers
   * have waited `LOOP_BUDGET_MS`.
   */
  private async eachRows(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: RowQueryOptions,
    take: (row: RowMaker, from: number, to: number) => boolean,
  ): Promise<void> {
    const { infos, reader } = await this.start(sql, params, options, true)
    try {
      const assembler = new RowAssembler(infos, options.rowMode ?? 'object', options)
      for (let items = await reader.next(); items !== null; items = await reader.next()) {
        for (const batch of items) {
          const row = assembler.rowMaker(batch)
          for (let from = 0; from < batch.numRows; from += CHUNK_ROWS) {
            if (!take(row, from, Math.min(batch.numRows, from + CHUNK_ROWS))) return
            if (loopBudgetSpent()) await loopTurn()
            reader.throwIfAborted()
          }
        }
      }
    } finally {
      reader.close()
    }
  }

  /** The first column of the first row; a `HyperError` (02000) when there is no row. */
  async queryScalar(sql: string, params?: readonly ParamValue[], options: QueryOptions = {}): Promise<HyperValue> {
    // Before the spread below, which takes `null` as no options.
    checkReadOptions(options, VALUE_OPTIONS, 'queryScalar')
    const row = await this.queryOne(sql, params, { ...options, rowMode: 'array' })
    if (row === null) {
      throw new HyperError({ code: '02000', message: 'the query returned no rows' })
    }
    if (row.length === 0) {
      // As Rust's `query_scalar` reports it (ColumnNotFound).
      throw new HyperError({ code: '42703', message: 'the query returned no columns: a scalar is its first' })
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
    const { infos, reader } = await this.start(sql, params, options, false)
    for await (const batch of eachItem(reader)) {
      yield columnChunk(infos, batch, options)
    }
  }

  /** A query's columns (names and types) without reading its rows. */
  async describe(sql: string, params?: readonly ParamValue[]): Promise<ResultColumn[]> {
    // As rows: its open reads the first batch, which must not fail on a
    // value `describe` never hands out.
    const { infos, reader } = await this.start(sql, params, {}, true)
    reader.close()
    return resultColumns(infos)
  }

  /**
   * Streams a query's result as raw Arrow IPC bytes: one IPC stream
   * (schema first, end-of-stream marker last) in chunks, over the received
   * memory. For callers that forward or decode Arrow themselves.
   */
  async *queryArrowIpc(
    sql: string,
    params?: readonly ParamValue[],
    options: ArrowQueryOptions = {},
  ): AsyncIterableIterator<Uint8Array> {
    checkReadOptions(options, ARROW_OPTIONS, 'queryArrowIpc')
    const args = statementParams(sql, params)
    const stream = await this.opened((token) => this.openIpc(sql, args, token), options.signal)
    yield* eachItem(new NativeReader<Uint8Array>(stream, options.signal))
  }

  /** Streams a query's result as `apache-arrow` `RecordBatch`es (a peer dependency). */
  async *queryArrow(
    sql: string,
    params?: readonly ParamValue[],
    options: ArrowQueryOptions = {},
  ): AsyncIterableIterator<RecordBatch> {
    yield* (await this.openArrow(sql, params, options, 'queryArrow')).batches
  }

  /**
   * A query's whole result as one `apache-arrow` `Table`; with no rows, a
   * table of none under the result's schema.
   */
  async queryArrowTable(sql: string, params?: readonly ParamValue[], options: ArrowQueryOptions = {}): Promise<Table> {
    const { arrow, schema, batches } = await this.openArrow(sql, params, options, 'queryArrowTable')
    const all: RecordBatch[] = []
    for await (const b of batches) all.push(b)
    return new arrow.Table(schema, all)
  }

  /** Starts a query read as `apache-arrow` batches; its schema and batches. */
  private async openArrow(
    sql: string,
    params: readonly ParamValue[] | undefined,
    options: ArrowQueryOptions,
    what: string,
  ): Promise<{ arrow: Arrow; schema: Schema; batches: AsyncIterableIterator<RecordBatch> }> {
    checkReadOptions(options, ARROW_OPTIONS, what)
    const args = statementParams(sql, params)
    // The query takes its place on the connection now, before the first
    // await: loading apache-arrow must not let calls made later run first.
    const [loaded, opened] = await Promise.allSettled([
      loadArrow(),
      this.opened((token) => this.openBatches(sql, args, token), options.signal),
    ])
    if (loaded.status === 'rejected') {
      if (opened.status === 'fulfilled') opened.value.close()
      throw loaded.reason
    }
    if (opened.status === 'rejected') throw opened.reason
    const arrow = loaded.value
    const stream = opened.value
    const schema = BatchMaker.schemaOf(arrow, stream.arrowSchema())
    const maker = new BatchMaker(arrow, schema)
    const batches: NativeStream<RecordBatch> = {
      next: nextAfterOpen(
        stream,
        () => stream.takeFirstArrow(),
        () => stream.nextArrow(),
        (h) => maker.batches(h),
      ),
      cancel: () => stream.cancel(),
      close: () => stream.close(),
    }
    return { arrow, schema, batches: eachItem(new NativeReader(batches, options.signal)) }
  }
}

/**
 * Rows a `queryChunks` chunk holds at most. A chunk's rows are all alive
 * until the consumer drops it, and each young-generation collection copies
 * them: with a whole 10K-row batch a chunk, two concurrent 5M-row reads
 * stalled the event loop for 10-40 ms a dozen times a read (scavenges of
 * 5-25 ms among them); with 1-4K rows a chunk, about once, and the reads
 * took 490-710 against 520-980 ms.
 */
const CHUNK_ROWS = 2048

/** Rows whose index has none of these bits set (one in 1024) check the event loop's budget. */
const BUDGET_CHECK_MASK = 1023

/**
 * Rows one at a time, each made when asked for: a plain iterator instead
 * of an async generator, which costs a generator resumption per row on top
 * of the Promise `for await` needs anyway (~1.5x faster per row, measured).
 */
class RowIterator implements AsyncIterableIterator<unknown> {
  private row: RowMaker = () => undefined
  private n = 0
  private i = 0
  /**
   * The last `next()` still to settle, when it waits for a batch or a
   * turn of the loop: a `next()` called meanwhile runs after it, so that
   * callers pulling at once each get their own row, as from an async
   * generator (they got `done` and lost the rest of the batch).
   */
  private pending: Promise<IteratorResult<unknown>> | undefined

  constructor(
    private readonly batches: AsyncIterableIterator<{ n: number; row: RowMaker }>,
    private readonly signal: AbortSignal | undefined,
  ) {}

  next(): Promise<IteratorResult<unknown>> {
    // Rows within a batch resolve in microtasks, so the event loop waits
    // for the whole batch unless the budget is checked here too: a
    // query's first 10K-row batch, read before the row code is compiled,
    // held the loop for 8-33 ms. An abort (from the loop's body too) ends
    // the rows at once, not at the batch's end.
    if (
      this.pending === undefined &&
      this.i < this.n &&
      this.signal?.aborted !== true &&
      ((this.i & BUDGET_CHECK_MASK) !== 0 || !loopBudgetSpent())
    ) {
      return Promise.resolve({ value: this.row(this.i++), done: false })
    }
    const now = () => this.nextNow()
    return this.track(this.pending === undefined ? now() : this.pending.then(now, now))
  }

  private track(next: Promise<IteratorResult<unknown>>): Promise<IteratorResult<unknown>> {
    this.pending = next
    const settled = () => {
      if (this.pending === next) this.pending = undefined
    }
    next.then(settled, settled)
    return next
  }

  /** The next row, after a turn of the loop if its budget is spent. */
  private async nextNow(): Promise<IteratorResult<unknown>> {
    if (this.i < this.n && (this.i & BUDGET_CHECK_MASK) === 0 && loopBudgetSpent()) await loopTurn()
    // Also after that turn, in which a timer may have aborted.
    if (this.signal?.aborted === true) {
      await this.return()
      throw canceledError(this.signal.reason)
    }
    return this.i < this.n ? { value: this.row(this.i++), done: false } : this.refill()
  }

  private async refill(): Promise<IteratorResult<unknown>> {
    for (;;) {
      const next = await this.batches.next()
      if (next.done === true) {
        this.n = 0
        return { value: undefined, done: true }
      }
      if (next.value.n > 0) {
        this.row = next.value.row
        this.n = next.value.n
        this.i = 1
        return { value: this.row(0), done: false }
      }
    }
  }

  /** Leaving a `for await` early abandons the rest of the result. */
  async return(value?: unknown): Promise<IteratorResult<unknown>> {
    this.n = 0
    await this.batches.return?.(undefined)
    return { value, done: true }
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    return this
  }
}

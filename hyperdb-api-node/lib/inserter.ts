/**
 * `Inserter`: rows into a table through one Arrow COPY, all or nothing.
 *
 * Rows are checked and gathered in JS into column builders
 * (`insert-columns.ts`); every `batchRows` rows the batch crosses to the
 * native layer in one call, which copies it and queues it for a Rust task
 * that encodes and sends it while JS gathers the next. Memory stays
 * constant: the queue is two batches deep, and a producer faster than the
 * server waits for room.
 */
import type { NativeColumn, NativeConnection, NativeInserter, TableDef } from './native'
import { native } from './native'
import { call, callSync, closedError, ErrorCode, HyperError, invalidArgument, toHyperError } from './errors'
import { checkOptions, kindOf } from './options'
import {
  fromDef,
  tableRef,
  toDef,
  type Catalog,
  type ColumnDefinition,
  type TableDefinition,
  type TableName,
} from './catalog'
import { BATCH_UNITS, columnBuilder, type BatchStart, type ColumnBuilder } from './insert-columns'

/** The rows a batch gathers before it crosses to the native layer. */
export const DEFAULT_BATCH_ROWS = 65_536

/**
 * Rows the column builders hold at first; they grow fourfold as rows come,
 * up to the batch's rows. Built for a whole batch at once, a new inserter
 * allocated and filled ~1.5 MB for five columns: half the JavaScript time
 * of a 10-row insert (0.71-0.74 against 0.38-0.43 ms of CPU).
 */
const FIRST_ROWS = 1024

export interface InserterOptions {
  /**
   * Rows a batch holds before it is sent (default 65536); a batch also
   * ends once its text and binary values hold 16 Mi characters and bytes.
   */
  batchRows?: number | undefined
}

/** A row: values in column order, or an object keyed by column name. */
export type InsertRow = readonly unknown[] | Readonly<Record<string, unknown>>

/** Gives a `Connection`'s native handle to this module only. */
export const nativeHandle = Symbol('nativeHandle')

/** What an inserter needs of a connection. */
export interface HasNative {
  [nativeHandle](): NativeConnection
  /** `close()` was called. */
  readonly isClosed: boolean
}

type RowWriter = (row: InsertRow, at: number) => void

/**
 * The connection whose insert is inside its async row source's `next()`
 * right now (synchronously), if any. A call on that connection from there
 * would wait for the insert, which waits for the row: `Connection`
 * refuses it at once (`refuseInRowSource`). A call made after an `await`
 * in the source cannot be told apart from any other task's without
 * tracking async context (AsyncLocalStorage's promise hooks made every
 * promise of the process ~2.5x dearer on Node 20), so it waits.
 */
let rowSourceOf: HasNative | undefined

/** The next row of `source`, marked as read for `conn`'s insert. */
function nextRow(conn: HasNative, source: AsyncIterator<InsertRow>): Promise<IteratorResult<InsertRow>> {
  const outer = rowSourceOf
  rowSourceOf = conn
  try {
    return source.next()
  } finally {
    rowSourceOf = outer
  }
}

/** A `HyperError` (55006) when `conn`'s own insert is reading its row source now. */
export function refuseInRowSource(conn: HasNative): void {
  if (rowSourceOf === conn) {
    throw new HyperError({
      code: ErrorCode.OBJECT_IN_USE,
      message:
        "a call on the connection from inside its insert's row source would wait for the insert, " +
        'which waits for the row: use another connection for lookups while inserting',
    })
  }
}

/**
 * The inserters open on each connection (neither executed nor cancelled):
 * each holds the connection, so a `transaction()` whose function leaves one
 * open would wait behind it for ever at its COMMIT or ROLLBACK
 * (`endOpenInserters`).
 */
const openOn = new WeakMap<HasNative, Set<Inserter>>()

/**
 * Cancels the inserters still open on `conn`, storing nothing; how many
 * there were.
 */
export async function endOpenInserters(conn: HasNative): Promise<number> {
  const open = openOn.get(conn)
  if (open === undefined || open.size === 0) return 0
  const inserters = [...open]
  await Promise.all(inserters.map((ins) => ins.cancel().catch(() => undefined)))
  return inserters.length
}

export class Inserter {
  private readonly native: NativeInserter
  private readonly builders: ColumnBuilder[]
  private readonly start: BatchStart = { row: 0, units: 0 }
  private readonly batchRows: number
  private readonly writeArray: RowWriter
  private readonly writeObject: RowWriter
  /** Rows in the batch being gathered. */
  private n = 0
  /** Rows the builders hold now. */
  private capacity: number
  private ended = false
  /** It ended because its connection was closed. */
  private closedUnder = false
  /** `execute()`'s commit, once it started. */
  private executing: Promise<number> | undefined
  /** The table's columns, in order, as `catalog.getTableDefinition` gives them. */
  readonly columns: readonly ColumnDefinition[]
  /** The connection the rows go into. */
  private readonly owner: HasNative

  /**
   * An inserter into `table`, whose columns (names, types, nullability,
   * order) must be the table's: they are checked against the server's
   * definition before anything is stored. Its place on the connection is
   * taken now; until `execute()` or `cancel()`, later calls on the
   * connection wait. To take the definition from the server instead, use
   * `Inserter.open` / `conn.inserter(name)`.
   */
  constructor(conn: HasNative, table: TableDefinition, options?: InserterOptions)
  /** @internal An inserter opened by name (`Inserter.open`). */
  constructor(conn: HasNative, table: TableDefinition | OpenedInserter, options?: InserterOptions)
  constructor(conn: HasNative, table: TableDefinition | OpenedInserter, options: InserterOptions = {}) {
    // Options first: an inserter once open holds the connection's place.
    this.batchRows = batchRows(options)
    checkConnection(conn)
    this.owner = conn
    const { native, def } = table instanceof OpenedInserter ? table : openChecked(conn, table)
    this.native = native
    this.columns = fromDef(def).columns
    this.capacity = Math.min(this.batchRows, FIRST_ROWS)
    try {
      this.builders = def.columns.map((c) => columnBuilder(c, this.start, this.capacity))
    } catch (e) {
      // Let go of the connection's place that the open took.
      native.abort().catch(() => undefined)
      throw e
    }
    this.writeArray = rowWriter(this.builders, 'array')
    this.writeObject = rowWriter(this.builders, 'object')
    let open = openOn.get(conn)
    if (open === undefined) openOn.set(conn, (open = new Set()))
    open.add(this)
  }

  /** No more rows: `execute()`, `cancel()`, a failed send or a close. */
  private end(): void {
    this.ended = true
    openOn.get(this.owner)?.delete(this)
  }

  /** An inserter into the existing table `table`, as the server defines it. */
  static async open(
    conn: HasNative & { readonly catalog: Catalog },
    table: TableName | TableDefinition,
    options: InserterOptions = {},
  ): Promise<Inserter> {
    batchRows(options)
    checkConnection(conn)
    return new Inserter(conn, isDefinition(table) ? table : await openByName(conn, table), options)
  }

  /** Rows added so far (including those not yet sent). */
  get rowCount(): number {
    return this.start.row + this.n
  }

  /**
   * Adds one row: values in column order, or an object keyed by column
   * name (a missing key is an error; `null` is NULL). A value that does
   * not fit its column throws a `HyperError` naming row, column and value
   * (`err.row`, `err.column`); that row is not added, and the inserter
   * stays usable. Blocks while the send queue is full.
   */
  addRow(row: InsertRow): void {
    if (this.gather(row)) this.flush()
  }

  /** Adds each row of `rows` (see `addRow`). */
  addRows(rows: Iterable<InsertRow>): void {
    checkRows(rows, false)
    for (const row of rows) this.addRow(row)
  }

  /**
   * Adds each row of `rows`, a sync or async iterable (a generator, a Node
   * stream in object mode), without blocking the event loop: a full batch
   * is sent while the source is read on, and the source waits while the
   * send queue is full.
   */
  async addRowsFrom(rows: Iterable<InsertRow> | AsyncIterable<InsertRow>): Promise<void> {
    checkRows(rows, true)
    if (Symbol.iterator in rows) {
      // A sync source is read without a promise a row; only a full batch waits.
      for (const row of rows) {
        if (this.gather(row)) await this.send()
      }
      return
    }
    // An async source may stall. The COPY ends without it when the query
    // timeout expires, `conn.cancel()` is called or the server fails:
    // `stopped` then rejects with that error, which settles this at once
    // rather than at the source's next row, which may never come.
    const reading = this.gatherFrom(rows)
    const stopped = call(this.native.stopSignal().wait())
    try {
      await Promise.race([reading, stopped.then(() => reading)])
    } finally {
      reading.catch(() => undefined)
      stopped.catch(() => undefined)
    }
  }

  /** `for await` over `rows`, each `next()` marked as this insert's (see `rowSourceOf`). */
  private async gatherFrom(rows: AsyncIterable<InsertRow>): Promise<void> {
    const source = rows[Symbol.asyncIterator]()
    for (;;) {
      const next = await nextRow(this.owner, source)
      if (next.done === true) return
      try {
        if (this.gather(next.value)) await this.send()
      } catch (e) {
        // As `for await` leaves a source on an error in its body.
        await Promise.resolve(source.return?.()).catch(() => undefined)
        throw e
      }
    }
  }

  /** Stores `row` into the batch; whether the batch is now full. */
  private gather(row: InsertRow): boolean {
    this.check()
    if (Array.isArray(row)) {
      if (row.length !== this.builders.length) {
        throw this.countError(row.length)
      }
      this.write(this.writeArray, row)
    } else if (typeof row === 'object' && row !== null) {
      this.write(this.writeObject, row)
    } else {
      throw new HyperError({
        code: ErrorCode.DATATYPE_MISMATCH,
        message: `row ${this.rowCount}: a row is an array or an object, not ${kindOf(row)}`,
        row: this.rowCount,
      })
    }
    const n = ++this.n
    if (n === this.batchRows || this.start.units >= BATCH_UNITS) return true
    if (n === this.capacity) this.grow()
    return false
  }

  /** Makes room for more rows in the batch being gathered. */
  private grow(): void {
    this.capacity = Math.min(this.capacity * 4, this.batchRows)
    for (const b of this.builders) b.grow(this.capacity)
  }

  /**
   * Sends the rest and commits: returns the rows stored (checked against
   * the rows sent). On any error nothing is stored.
   */
  async execute(): Promise<number> {
    this.check()
    this.end()
    const executing = (async () => {
      try {
        // The last batch goes with the commit: one crossing, not two.
        const rows = this.n
        return await call(() => (rows > 0 ? this.native.finish(rows, this.columnsOfBatch()) : this.native.finish()))
      } catch (e) {
        await this.native.abort().catch(() => undefined)
        throw e
      }
    })()
    this.executing = executing
    return executing
  }

  /**
   * Ends the insert storing nothing; the connection is free when this
   * resolves. Once `execute()` runs, its commit is under way: this waits
   * for it instead (and what it stored stays).
   */
  async cancel(): Promise<void> {
    this.end()
    if (this.executing !== undefined) {
      await this.executing.catch(() => undefined)
      return
    }
    await call(this.native.abort())
  }

  /** `await using ins = ...`: cancels unless `execute()` ran. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.ended) await this.cancel()
  }

  private write(writer: RowWriter, row: InsertRow): void {
    try {
      writer(row, this.n)
    } catch (e) {
      for (const b of this.builders) b.clear(this.n)
      throw e
    }
  }

  private columnsOfBatch(): NativeColumn[] {
    return this.builders.map((b) => b.column(this.n))
  }

  private nextBatch(): void {
    this.start.row += this.n
    this.start.units = 0
    this.n = 0
    for (const b of this.builders) b.reset()
  }

  /** Hands the batch over, blocking while the queue is full. */
  private flush(): void {
    const rows = this.n
    try {
      this.native.push(rows, this.columnsOfBatch())
    } catch (e) {
      // The native abort frees the connection; it need not be awaited here.
      void this.fail()
      throw toHyperError(e)
    }
    this.nextBatch()
  }

  /**
   * Hands the batch over without blocking. The native layer copies the
   * batch before `send` returns, so the builders are free again at once.
   */
  private async send(): Promise<void> {
    const sending = call(() => this.native.send(this.n, this.columnsOfBatch()))
    this.nextBatch()
    try {
      await sending
    } catch (e) {
      await this.fail()
      throw e
    }
  }

  /**
   * After a failed hand-over the insert has ended (nothing is stored) and
   * its COPY is aborted, so that the connection is free for the next call.
   */
  private async fail(): Promise<void> {
    this.end()
    await this.native.abort().catch(() => undefined)
  }

  private check(): void {
    if (!this.ended && this.owner.isClosed) {
      // `close()` ended the insert (storing nothing): say so from the first
      // row after it, not only when a batch would have been sent.
      this.end()
      this.closedUnder = true
    }
    if (this.ended) {
      throw this.closedUnder
        ? closedError()
        : new HyperError({
            code: ErrorCode.INVALID_PARAMETER_VALUE,
            message: 'the insert has ended (execute, cancel, or a failed send)',
          })
    }
  }

  private countError(got: number): HyperError {
    return new HyperError({
      code: ErrorCode.INVALID_PARAMETER_VALUE,
      message: `row ${this.rowCount}: ${got} values for ${this.builders.length} columns`,
      row: this.rowCount,
    })
  }
}

/**
 * Refuses `rows` unless it is an iterable (or, where `async`, an async
 * iterable): `addRows(null)` threw "rows is not iterable", a TypeError.
 */
function checkRows(rows: unknown, async: boolean): asserts rows is Iterable<InsertRow> | AsyncIterable<InsertRow> {
  const iterable =
    typeof rows === 'object' && rows !== null && (Symbol.iterator in rows || (async && Symbol.asyncIterator in rows))
  if (!iterable) {
    throw invalidArgument(
      `rows are ${async ? 'an iterable or an async iterable' : 'an iterable'} of rows, not ${kindOf(rows)}`,
    )
  }
}

/**
 * Refuses `conn` unless it is a `Connection` (what an inserter writes
 * through): `new Inserter(null, ...)` threw a TypeError.
 */
function checkConnection(conn: unknown): asserts conn is HasNative {
  if (typeof conn !== 'object' || conn === null || typeof (conn as Partial<HasNative>)[nativeHandle] !== 'function') {
    throw invalidArgument(`an Inserter writes through a Connection, not ${kindOf(conn)}`)
  }
}

/** A native inserter, and the table's definition as its builders need it. */
export class OpenedInserter {
  constructor(
    readonly native: NativeInserter,
    readonly def: TableDef,
  ) {}
}

function isDefinition(table: TableName | TableDefinition): table is TableDefinition {
  return typeof table === 'object' && table !== null && 'columns' in table
}

/** An inserter into `table`, checked against the server's definition once the COPY starts. */
function openChecked(conn: HasNative, table: TableDefinition): OpenedInserter {
  const def = canonical(table)
  return new OpenedInserter(
    callSync(() => conn[nativeHandle]().inserter(def.table, def)),
    def,
  )
}

/**
 * An inserter into the table `name` as the server defines it: the native
 * inserter looks the table up in its own transaction, so an insert by
 * name costs one catalog query rather than a lookup and then the check.
 */
export async function openByName(conn: HasNative, name: TableName): Promise<OpenedInserter> {
  const inserter = callSync(() => conn[nativeHandle]().inserter(tableRef(name)))
  try {
    return new OpenedInserter(inserter, await call(inserter.opened()))
  } catch (e) {
    await inserter.abort().catch(() => undefined)
    throw e
  }
}

/** A native inserter into `table`, a name or a definition. */
export async function openInserter(conn: HasNative, table: TableName | TableDefinition): Promise<OpenedInserter> {
  return isDefinition(table) ? openChecked(conn, table) : openByName(conn, table)
}

/** `table` with every type spelled as hyperd spells it (what the builders switch on). */
export function canonical(table: TableDefinition): TableDef {
  return callSync(() => native.canonicalTable(toDef(table)))
}

/** Checks `options` (an insert's) and returns its batch size. */
export function batchRows(options: InserterOptions | undefined, known: readonly string[] = ['batchRows']): number {
  checkOptions(options, known, 'an insert')
  const n = options?.batchRows
  if (n === undefined) return DEFAULT_BATCH_ROWS
  if (!Number.isInteger(n) || n < 1 || n > 16_777_216) {
    throw new HyperError({ code: ErrorCode.INVALID_PARAMETER_VALUE, message: `batchRows must be 1..2^24, not ${n}` })
  }
  return n
}

/**
 * A function that stores one row into the builders: one call site per
 * column, so each sees a single builder class. Keys are JSON string
 * literals of the column names, never code. A column named like a
 * property every object inherits (`constructor`, `toString`) is read only
 * from the row's own keys, so that a missing one is reported as missing.
 */
function rowWriter(builders: readonly ColumnBuilder[], shape: 'array' | 'object'): RowWriter {
  const calls = builders.map((b, i) => {
    if (shape === 'array') return `b${i}.set(row[${i}], at);`
    const key = JSON.stringify(b.name)
    return b.name in Object.prototype
      ? `b${i}.set(Object.hasOwn(row, ${key}) ? row[${key}] : undefined, at);`
      : `b${i}.set(row[${key}], at);`
  })
  const names = builders.map((_, i) => `b${i}`)
  const make = new Function(...names, `return function write(row, at) {\n${calls.join('\n')}\n}`)
  return make(...builders) as RowWriter
}

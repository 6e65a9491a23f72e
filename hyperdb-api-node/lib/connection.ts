/**
 * `Connection`: one connection to hyperd. Calls queue in the order they
 * are made; a result stream holds the connection until it ends or is left
 * (`break`, an error in the loop, `return()`), and a call made while one is
 * open on the same connection reads the rest of that result into memory so
 * both go on (one connection per concurrent stream keeps memory constant).
 */
import type { NativeBatchStream, NativeCancelToken, NativeConnection, NativeIpcStream, Param } from './native'
import { native } from './native'
import { call, callSync, closedError, ErrorCode, HyperError, invalidArgument } from './errors'
import { checkMillis, checkOptions, kindOf, optionalString, optionalStrings, stringEntries, stringOf } from './options'
import { statementParams, type ParamValue } from './params'
import { checkSignal, Queries, watched } from './queries'
import { resultColumns, type ResultColumn } from './columns'
import { Catalog, tableRef, type TableName } from './catalog'
import { holdServer, releaseServer } from './process'
import { sendArrow, type ArrowInsertData } from './arrow-input'
import {
  Inserter,
  endOpenInserters,
  nativeHandle,
  refuseInRowSource,
  type InserterOptions,
  type InsertRow,
} from './inserter'
import { insertColumns, type ColumnValues, type InsertColumnsOptions } from './column-input'
import type { TableDefinition } from './catalog'

export type { ArrowQueryOptions, QueryOptions, RowQueryOptions } from './queries'

export type CreateMode = 'doNotCreate' | 'create' | 'createIfNotExists' | 'createAndReplace'

export interface CommandOptions {
  /** Cancels the statement, waiting or running; it rejects with code 57014. */
  signal?: AbortSignal | undefined
}

export interface ConnectOptions {
  /** Where hyperd listens: `HyperProcess.endpoint`, or `tab.tcp://host:port`, `unix:/dir/socket`, `tab.domain://dir/domain/name`. */
  endpoint: string
  /**
   * The `.hyper` file to open, attached under its file stem: the database
   * name SQL qualifies its tables with (`"sales"."public"."t"` for
   * `data/sales.hyper`), as in Tableau's Hyper API.
   */
  database?: string | undefined
  /** What to do with `database` (default `doNotCreate`: it must exist). */
  createMode?: CreateMode | undefined
  user?: string | undefined
  password?: string | undefined
  /**
   * The authentication methods the server may ask for, as libpq's
   * `require_auth` names them; another request fails the connect (code
   * `28000`) before anything is sent. Default: all of them on this
   * machine (loopback, Unix sockets), and no `password` or `md5` for
   * servers elsewhere (the connection has no TLS).
   */
  requireAuth?: Array<'none' | 'password' | 'md5' | 'scram-sha-256'> | undefined
  /** How long connecting (socket, TLS, authentication) may take: default 30,000 (`HYT00` when it expires). */
  connectTimeoutMs?: number | undefined
  /** Each statement is cancelled after this long (error code `HYT00`). Default: no limit. */
  queryTimeoutMs?: number | undefined
  /**
   * Session settings (`SET name = value`), validated by hyperd. Sessions
   * start with `extra_float_digits: '2'` and `two_digit_year_threshold:
   * '40'` unless given here, as Tableau's Hyper API connects (see the
   * README's defaults section). `result_format_code` is the client's own
   * (it reads every result as HyperBinary): setting it is an error.
   */
  settings?: Record<string, string> | undefined
}

const CONNECT_OPTIONS = [
  'endpoint',
  'database',
  'createMode',
  'user',
  'password',
  'requireAuth',
  'connectTimeoutMs',
  'queryTimeoutMs',
  'settings',
]

export class Connection extends Queries {
  private closed = false
  /** The first `close()`'s work, which every later one waits for. */
  private closing: Promise<void> | undefined
  /** A `transaction()` runs (see there). */
  private inTransaction = false

  private constructor(
    private readonly conn: NativeConnection,
    endpoint: string,
  ) {
    super()
    // Its server must not be collected (and stopped) while it is open.
    holdServer(this, endpoint)
  }

  protected openBatches(
    sql: string,
    params: Param[],
    token?: NativeCancelToken,
    forRows?: boolean,
  ): Promise<NativeBatchStream> {
    return this.native().queryBatches(sql, params, token, forRows)
  }

  protected openIpc(sql: string, params: Param[], token?: NativeCancelToken): Promise<NativeIpcStream> {
    return this.native().queryIpc(sql, params, token)
  }

  /** Connects, and creates or opens `database` according to `createMode`. */
  static async connect(options: ConnectOptions): Promise<Connection> {
    if (options === undefined) throw invalidArgument('Connection.connect takes options: { endpoint, ... }')
    checkOptions(options, CONNECT_OPTIONS, 'Connection.connect')
    checkMillis(options.connectTimeoutMs, 'connectTimeoutMs')
    checkMillis(options.queryTimeoutMs, 'queryTimeoutMs')
    const settings = stringEntries(options.settings, 'settings')
    const endpoint = stringOf(options.endpoint, 'endpoint')
    const conn = await call(() =>
      native.NativeConnection.connect({
        endpoint,
        database: optionalString(options.database, 'database'),
        createMode: optionalString(options.createMode, 'createMode'),
        user: optionalString(options.user, 'user'),
        password: optionalString(options.password, 'password'),
        requireAuth: optionalStrings(options.requireAuth, 'requireAuth'),
        connectTimeoutMs: options.connectTimeoutMs,
        queryTimeoutMs: options.queryTimeoutMs,
        settings,
      }),
    )
    return new Connection(conn, endpoint)
  }

  private native(): NativeConnection {
    if (this.closed) throw closedError()
    refuseInRowSource(this)
    return this.conn
  }

  /** For `Inserter` and `insertColumns`. */
  [nativeHandle](): NativeConnection {
    return this.native()
  }

  /**
   * A statement's columns (names, types, nullability) without reading its
   * rows. A query is started and abandoned once its columns are known;
   * any other statement is only described by the server, never run
   * (describing a `DELETE` deletes nothing; its columns say nullable, as
   * a description does not tell).
   */
  override async describe(sql: string, params?: readonly ParamValue[]): Promise<ResultColumn[]> {
    const infos = await call(() => this.native().describe(sql, statementParams(sql, params)))
    return resultColumns(infos)
  }

  /**
   * Runs one SQL statement (hyperd takes one per call) and returns the
   * affected row count: a `number`, or a `bigint` past 2^53. `signal`
   * cancels it, waiting for its turn or running: the call then rejects
   * with 57014 and stored nothing, or, when the statement had completed
   * before the cancel reached it, resolves with its count as usual. A
   * server that leaves the cancel unanswered for 5 s (stopped, or behind
   * a network that drops everything) has the call reject with HYT00 and
   * the connection given up.
   */
  async executeCommand(
    sql: string,
    params?: readonly ParamValue[],
    options?: CommandOptions,
  ): Promise<number | bigint> {
    checkOptions(options, ['signal'], 'executeCommand')
    checkSignal(options?.signal)
    const args = statementParams(sql, params)
    return watched((token) => this.native().executeCommand(sql, args, token), options?.signal, undefined, 'outcome')
  }

  /**
   * Inserts Arrow data into the existing table `table` in one COPY and
   * returns the rows stored: an `apache-arrow` `Table`, a `RecordBatch`, a
   * sync or async iterable of batches (written and sent one at a time, so
   * a stream of batches never sits whole in memory), or the bytes of one
   * Arrow IPC stream (a `Uint8Array`, or an iterable of its chunks in
   * order). The schema is checked against the table as hyperd defines it
   * (field names, types, nullability) before anything is sent, and every
   * batch has the first one's names and types, an empty batch too; on any
   * error nothing is stored.
   */
  async insertArrow(table: TableName, data: ArrowInsertData): Promise<number> {
    const inserter = callSync(() => this.native().inserter(tableRef(table)))
    try {
      if (!(await sendArrow(inserter, data))) {
        // Nothing came: still an error when the table does not exist.
        await call(inserter.opened())
        await call(inserter.abort())
        return 0
      }
      return await call(inserter.finish())
    } catch (e) {
      await inserter.abort().catch(() => undefined)
      throw e
    }
  }

  /**
   * An `Inserter` into `table`: a name (the server's definition is used)
   * or a `TableDefinition` (checked against the server's). Until its
   * `execute()` or `cancel()`, later calls on this connection wait.
   */
  async inserter(table: TableName | TableDefinition, options?: InserterOptions): Promise<Inserter> {
    return Inserter.open(this, table, options)
  }

  /**
   * Inserts every row of `rows` (arrays or objects, see
   * `Inserter.addRow`), a sync or async iterable such as a generator or a
   * Node stream in object mode, in one COPY; returns the rows stored. The
   * source is read as the rows are sent, so memory stays constant. All or
   * nothing: a refused value or any other error stores no row. The source
   * must not wait for a call on this connection, which waits for the
   * insert: look values up through another connection (a call the source
   * makes as its next row is asked for is refused with 55006).
   */
  async insertRows(
    table: TableName | TableDefinition,
    rows: Iterable<InsertRow> | AsyncIterable<InsertRow>,
    options?: InserterOptions,
  ): Promise<number> {
    const inserter = await this.inserter(table, options)
    try {
      await inserter.addRowsFrom(rows)
      return await inserter.execute()
    } catch (e) {
      await inserter.cancel().catch(() => undefined)
      throw e
    }
  }

  /**
   * Inserts whole columns, keyed by column name (every column of the
   * table, all of one length): TypedArrays of the column's own element
   * type cross as they are, with no per-value JS work (`Int32Array` for
   * INTEGER, `Float64Array` for DOUBLE PRECISION, `BigInt64Array` for
   * BIGINT and for TIMESTAMP/TIME in microseconds, ...); other arrays are
   * checked value by value as `Inserter.addRow` does. `nulls` marks NULL
   * rows per column. Returns the rows stored; all or nothing.
   */
  async insertColumns(
    table: TableName | TableDefinition,
    columns: Readonly<Record<string, ColumnValues>>,
    options?: InsertColumnsOptions,
  ): Promise<number> {
    return insertColumns(this, table, columns, options)
  }

  /**
   * Runs `fn` in a transaction: COMMIT when it resolves, ROLLBACK when it
   * throws (and the error is rethrown). If a statement in it failed and
   * `fn` caught that error, hyperd rolls back instead of committing, and
   * this rejects with 25P02 (`ErrorCode.IN_FAILED_SQL_TRANSACTION`): it
   * never resolves without the rows stored. Other calls on this connection
   * made meanwhile run inside the transaction too: give a transaction its
   * own connection when others share it. One transaction runs at a time:
   * calling `transaction` while one runs on this connection (from another
   * task, or nested in `fn`) rejects with 25001
   * (`ErrorCode.ACTIVE_SQL_TRANSACTION`) and sends nothing, since the two
   * would share one transaction and one's ROLLBACK undo the other's rows.
   * An inserter `fn` leaves open (neither executed nor cancelled) is
   * cancelled when `fn` ends: after a throw, before the ROLLBACK; after a
   * return, the transaction rolls back and this rejects with 25000
   * (`ErrorCode.INVALID_TRANSACTION_STATE`), since rows were added that
   * were never stored.
   */
  async transaction<T>(fn: (tx: Connection) => Promise<T>): Promise<T> {
    if (typeof fn !== 'function') {
      throw invalidArgument(`transaction takes an async function, not ${kindOf(fn)}`)
    }
    if (this.inTransaction) {
      throw new HyperError({
        code: ErrorCode.ACTIVE_SQL_TRANSACTION,
        message:
          'a transaction already runs on this connection: transactions on one connection run one at a time ' +
          '(await the first, or give each its own connection)',
      })
    }
    this.inTransaction = true
    try {
      await this.executeCommand('BEGIN')
      let result: T
      try {
        result = await fn(this)
      } catch (e) {
        // An inserter `fn` left open holds the connection: the ROLLBACK
        // would wait behind it for ever.
        await endOpenInserters(this)
        await this.rollbackQuietly()
        throw e
      }
      if ((await endOpenInserters(this)) > 0) {
        await this.rollbackQuietly()
        throw new HyperError({
          code: ErrorCode.INVALID_TRANSACTION_STATE,
          message:
            "the transaction's function returned with an inserter still open (neither executed nor " +
            'cancelled): it was cancelled and the transaction rolled back, storing nothing',
        })
      }
      // hyperd answers COMMIT with a rollback, and no error, when a statement
      // in the transaction failed (one whose error `fn` caught): the native
      // commit then rejects with 25P02 instead of reporting rows stored.
      await call(() => this.native().commit())
      return result
    } finally {
      this.inTransaction = false
    }
  }

  /** ROLLBACK, whose own failure (the connection gone) is not the error to report. */
  private async rollbackQuietly(): Promise<void> {
    try {
      await this.executeCommand('ROLLBACK')
    } catch {
      // The error that led here is what matters.
    }
  }

  /** Schemas, tables and databases. */
  get catalog(): Catalog {
    this.native()
    return new Catalog(() => this.native())
  }

  /**
   * Cancels the call running on this connection now, if it was made
   * before this one (it rejects with 57014), even one made just before
   * that hyperd has not started yet; calls queued behind it run. Also
   * while `close()` waits for a call to end.
   */
  async cancel(): Promise<void> {
    // Also while `close()` waits for a running statement: the way to end it.
    if (this.closed && this.conn.isClosed) throw closedError()
    return call(this.conn.cancel())
  }

  /**
   * Closes the connection after the calls queued before it; later calls
   * reject (08003). An inserter still open (neither executed nor
   * cancelled) is ended first, storing nothing (its `execute()` rejects
   * with 08003): its owner may never finish it. A second `close()`
   * resolves when the first has closed.
   */
  async close(): Promise<void> {
    this.closed = true
    this.closing ??= call(() => this.conn.close())
    await this.closing
    releaseServer(this)
  }

  get isClosed(): boolean {
    return this.closed
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

export { ErrorCode }

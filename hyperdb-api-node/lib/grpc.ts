/**
 * `GrpcConnection`: reads over hyperd's gRPC interface (start hyperd with
 * `HyperProcess.start({ grpc: true })`). Every read style of `Connection`
 * is here too; writes stay on the PostgreSQL protocol. Calls may overlap:
 * each query is its own gRPC stream.
 */
import type { NativeBatchStream, NativeCancelToken, NativeGrpcConnection, NativeIpcStream, Param } from './native'
import { native } from './native'
import { holdServer, releaseServer } from './process'
import { call, closedError, invalidArgument } from './errors'
import { Queries } from './queries'
import { checkMillis, checkOptions, optionalString, stringEntries, stringOf } from './options'

export interface GrpcConnectOptions {
  /** `HyperProcess.grpcEndpoint`. */
  endpoint: string
  /** The `.hyper` file to query. */
  database?: string | undefined
  /**
   * How results travel: `sync` (all on the query's stream; the default,
   * and the fastest), `async` (fetched in chunks) or `adaptive` (the first
   * chunk inline, the rest fetched). `async` and `adaptive` need a hyperd
   * that persists results (`parameters: { grpc_persist_results: 'true' }`);
   * without it they fail with code 55000.
   */
  transferMode?: 'sync' | 'async' | 'adaptive' | undefined
  /** Query settings, validated by hyperd. */
  settings?: Record<string, string> | undefined
  /** How long connecting (TCP, TLS) may take: default 30,000 (`HYT00` when it expires). */
  connectTimeoutMs?: number | undefined
  /**
   * Each query is cancelled after this long, from the call to the end of
   * its result (error code `HYT00`). Default: no limit. A query whose
   * replies stopped arriving (a dead link) fails this way too.
   */
  queryTimeoutMs?: number | undefined
}

export class GrpcConnection extends Queries {
  private closed = false

  private constructor(
    private readonly conn: NativeGrpcConnection,
    endpoint: string,
  ) {
    super()
    // Its server must not be collected (and stopped) while it is open.
    holdServer(this, endpoint)
  }

  static async connect(options: GrpcConnectOptions): Promise<GrpcConnection> {
    if (options === undefined) throw invalidArgument('GrpcConnection.connect takes options: { endpoint, ... }')
    checkOptions(
      options,
      ['endpoint', 'database', 'transferMode', 'settings', 'connectTimeoutMs', 'queryTimeoutMs'],
      'GrpcConnection.connect',
    )
    checkMillis(options.connectTimeoutMs, 'connectTimeoutMs')
    checkMillis(options.queryTimeoutMs, 'queryTimeoutMs')
    const settings = stringEntries(options.settings, 'settings')
    const endpoint = stringOf(options.endpoint, 'endpoint')
    const conn = await call(() =>
      native.NativeGrpcConnection.connect({
        endpoint,
        database: optionalString(options.database, 'database'),
        transferMode: optionalString(options.transferMode, 'transferMode'),
        settings,
        connectTimeoutMs: options.connectTimeoutMs,
        queryTimeoutMs: options.queryTimeoutMs,
      }),
    )
    return new GrpcConnection(conn, endpoint)
  }

  // gRPC queries do not queue (each is its own stream); `token` cancels
  // the query on the server from the moment hyperd has taken it, before
  // its first batch too (an aggregate is stopped, not computed to its
  // end), and only that query, whatever else runs on the connection.
  protected openBatches(sql: string, params: Param[], token?: NativeCancelToken): Promise<NativeBatchStream> {
    return this.native().queryBatches(sql, params, token)
  }

  protected openIpc(sql: string, params: Param[], token?: NativeCancelToken): Promise<NativeIpcStream> {
    return this.native().queryIpc(sql, params, token)
  }

  /** Cancels the query most recently started on this connection. */
  async cancel(): Promise<void> {
    await call(() => this.native().cancel())
  }

  /**
   * Closes the connection: later calls reject (08003). Results already
   * open read on to their end (each is a stream of its own); the channel
   * goes with the last of them.
   */
  async close(): Promise<void> {
    this.closed = true
    this.conn.close()
    releaseServer(this)
  }

  get isClosed(): boolean {
    return this.closed
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  private native(): NativeGrpcConnection {
    if (this.closed) throw closedError()
    return this.conn
  }
}

/**
 * `HyperProcess`: a hyperd server owned by this process. Starting and
 * stopping never block the event loop; hyperd also exits when this process
 * dies.
 *
 * hyperd lets whoever connects read and write files as the user who
 * started it, so by default it listens where only that user can reach it:
 * a Unix socket in a private (0700) directory (`ipc`), with no password.
 * `transport: 'tcp'` listens on loopback, which every local account can
 * reach; hyperd then requires a password (the one given, or one generated
 * at start), so connect with `password: hyper.password`.
 */
import { native, type NativeProcess } from './native'
import { call } from './errors'
import { checkInteger, checkMillis, checkOptions, flagOf, optionalString, stringEntries } from './options'

export interface HyperProcessOptions {
  /**
   * `ipc` (default on Unix: a Unix socket in a private 0700 directory, only
   * this user can connect) or `tcp` (loopback, a free port; any local
   * account can reach it, so hyperd requires `password`, generated when not
   * given).
   */
  transport?: 'tcp' | 'ipc' | undefined
  /**
   * Also serve gRPC (`grpcEndpoint`). hyperd's gRPC takes only trusted
   * sessions: every local account can use it, and a `tcp` server with gRPC
   * gets no generated password. Results are not persisted unless
   * `parameters` sets `grpc_persist_results: 'true'`, which the `async`
   * and `adaptive` transfer modes need (it writes every result to disk and
   * halved the speed of `sync` reads, as measured in Rust).
   */
  grpc?: boolean | undefined
  /** The hyperd executable or its directory. Default: `HYPERD_PATH`, then `.hyperd/hyperd` in the working directory or above. */
  hyperdPath?: string | undefined
  /** Where hyperd writes its log (default: a temporary directory). */
  logDir?: string | undefined
  /**
   * hyperd parameters, e.g. `{ log_config: '' }`. hyperd starts with
   * `date_style: 'MDY'` and `date_style_lenient: 'false'` unless given here,
   * as Tableau's Hyper API starts it (see the README's defaults section).
   */
  parameters?: Record<string, string> | undefined
  /** The `.hyper` file version new databases get (default 4). */
  defaultDatabaseVersion?: number | undefined
  /** Require this password (SCRAM), on either transport. Default: generated for `tcp` (unless `grpc`), none for `ipc`. */
  password?: string | undefined
  /** How long hyperd may take to start listening: default 30,000 (then `58000`, and the child is killed). */
  startTimeoutMs?: number | undefined
}

/**
 * Running processes by endpoint (PG wire and gRPC), held weakly, and the
 * process each open connection holds. A HyperProcess the garbage collector
 * takes stops its hyperd: one a caller kept no reference to (started in a
 * helper that returned only the connection) was stopped under the
 * connections still using it.
 */
const running = new Map<string, WeakRef<HyperProcess>>()
const holders = new WeakMap<object, HyperProcess>()

/** Keeps the HyperProcess this package started at `endpoint`, if any, reachable while `holder` is. */
export function holdServer(holder: object, endpoint: string): void {
  const server = running.get(endpoint)?.deref()
  if (server === undefined) running.delete(endpoint)
  else holders.set(holder, server)
}

/** Ends what `holdServer` began (a connection closed). */
export function releaseServer(holder: object): void {
  holders.delete(holder)
}

export class HyperProcess {
  /** The first `close()`'s work, which every later one waits for. */
  private closing: Promise<void> | undefined

  private constructor(private readonly process: NativeProcess) {}

  static async start(options: HyperProcessOptions = {}): Promise<HyperProcess> {
    checkOptions(
      options,
      [
        'transport',
        'grpc',
        'hyperdPath',
        'logDir',
        'parameters',
        'defaultDatabaseVersion',
        'password',
        'startTimeoutMs',
      ],
      'HyperProcess.start',
    )
    checkMillis(options.startTimeoutMs, 'startTimeoutMs')
    // A u32 natively: napi would wrap or truncate anything else.
    checkInteger(options.defaultDatabaseVersion, 'defaultDatabaseVersion', 0, 2 ** 32 - 1)
    const parameters = stringEntries(options.parameters, 'parameters')
    const process = await call(() =>
      native.NativeProcess.start({
        transport: optionalString(options.transport, 'transport'),
        grpc: flagOf(options.grpc, 'grpc'),
        hyperdPath: optionalString(options.hyperdPath, 'hyperdPath'),
        logDir: optionalString(options.logDir, 'logDir'),
        parameters,
        defaultDatabaseVersion: options.defaultDatabaseVersion,
        password: optionalString(options.password, 'password'),
        startTimeoutMs: options.startTimeoutMs,
      }),
    )
    const server = new HyperProcess(process)
    for (const endpoint of [server.endpoint, server.grpcEndpoint]) {
      if (endpoint !== null) running.set(endpoint, new WeakRef(server))
    }
    return server
  }

  /** Where to connect: `Connection.connect({ endpoint: hyper.endpoint, password: hyper.password })`. */
  get endpoint(): string {
    return this.process.endpoint
  }

  /** The password hyperd requires: the one given, or the one generated for `tcp`; `undefined` for `ipc` (or gRPC) without one. */
  get password(): string | undefined {
    return this.process.password ?? undefined
  }

  /** The gRPC endpoint when started with `grpc: true`, else `null`. */
  get grpcEndpoint(): string | null {
    return this.process.grpcEndpoint
  }

  get pid(): number {
    return this.process.pid
  }

  /**
   * Stops hyperd (killing it if it does not stop within 10 s). Every call
   * resolves once hyperd has stopped, a second one too.
   */
  async close(): Promise<void> {
    for (const endpoint of [this.endpoint, this.grpcEndpoint]) {
      if (endpoint !== null && running.get(endpoint)?.deref() === this) running.delete(endpoint)
    }
    this.closing ??= call(this.process.close())
    await this.closing
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

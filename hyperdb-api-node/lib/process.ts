/**
 * `HyperProcess`: a hyperd server owned by this process. Starting and
 * stopping never block the event loop; hyperd also exits when this process
 * dies.
 */
import { native, type NativeProcess } from './native'
import { call } from './errors'

export interface HyperProcessOptions {
  /** `tcp` (default: loopback, a free port) or `ipc` (a Unix socket in a private 0700 directory). */
  transport?: 'tcp' | 'ipc'
  /** Also serve gRPC (`grpcEndpoint`). */
  grpc?: boolean
  /** The hyperd executable or its directory. Default: `HYPERD_PATH`, then `.hyperd/hyperd` in the working directory or above. */
  hyperdPath?: string
  /** Where hyperd writes its log (default: a temporary directory). */
  logDir?: string
  /** hyperd parameters, e.g. `{ log_config: '' }`. */
  parameters?: Record<string, string>
  /** The `.hyper` file version new databases get (default 4). */
  defaultDatabaseVersion?: number
  /** Require this password (SCRAM) instead of running without one. */
  password?: string
  startTimeoutMs?: number
}

export class HyperProcess {
  private constructor(private readonly process: NativeProcess) {}

  static async start(options: HyperProcessOptions = {}): Promise<HyperProcess> {
    const parameters = options.parameters === undefined ? undefined : Object.entries(options.parameters)
    const process = await call(
      native.NativeProcess.start({
        transport: options.transport,
        grpc: options.grpc,
        hyperdPath: options.hyperdPath,
        logDir: options.logDir,
        parameters,
        defaultDatabaseVersion: options.defaultDatabaseVersion,
        password: options.password,
        startTimeoutMs: options.startTimeoutMs,
      }),
    )
    return new HyperProcess(process)
  }

  /** Where to connect: pass it as `Connection.connect({ endpoint })`. */
  get endpoint(): string {
    return this.process.endpoint
  }

  /** The gRPC endpoint when started with `grpc: true`, else `null`. */
  get grpcEndpoint(): string | null {
    return this.process.grpcEndpoint
  }

  get pid(): number {
    return this.process.pid
  }

  /** Stops hyperd (killing it if it does not stop within 10 s). */
  async close(): Promise<void> {
    await call(this.process.close())
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

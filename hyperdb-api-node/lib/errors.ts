/**
 * `HyperError`: every error this package throws. `code` is always a
 * SQLSTATE: the server's own, or the standard class that fits a client-side
 * failure (see `ErrorCode`).
 */

/** Codes worth branching on; any other SQLSTATE may appear too. */
export const ErrorCode = {
  /** `42601`: a syntax error. */
  SYNTAX_ERROR: '42601',
  /** `42P01`: the table does not exist. */
  UNDEFINED_TABLE: '42P01',
  /** `3D000`: a catalog lookup names a database the connection has not attached. */
  INVALID_CATALOG_NAME: '3D000',
  /** `23502`: NULL in a NOT NULL column. */
  NOT_NULL_VIOLATION: '23502',
  /** `57014`: cancelled by `cancel()` or an `AbortSignal`. */
  QUERY_CANCELED: '57014',
  /** `HYT00`: `queryTimeoutMs` or `connectTimeoutMs` expired. */
  TIMEOUT: 'HYT00',
  /** `08006`: the connection is lost (hyperd died, the socket broke). */
  CONNECTION_FAILURE: '08006',
  /** `08003`: the connection was closed by `close()`. */
  CONNECTION_CLOSED: '08003',
  /** `22023`: an argument was refused before anything was sent. */
  INVALID_PARAMETER_VALUE: '22023',
  /** `22003`: a value does not fit (e.g. a BIGINT read as a number past 2^53). */
  NUMERIC_VALUE_OUT_OF_RANGE: '22003',
  /** `42804`: a value of the wrong type. */
  DATATYPE_MISMATCH: '42804',
  /** `02000`: `queryScalar` of a statement that returned no row. */
  NO_DATA: '02000',
  /** `22000`: a value read that has no form on this side (an INTERVAL past 2^63 ns on an Arrow read). */
  DATA_EXCEPTION: '22000',
  /** `22P02`: text that is no value of its type (NUMERIC text that is no number). */
  INVALID_TEXT_REPRESENTATION: '22P02',
  /** `22001`: a string longer than its VARCHAR(n) or CHAR(n) column. */
  STRING_DATA_RIGHT_TRUNCATION: '22001',
  /** `22008`: a date or time out of the range an insert takes, or that Arrow cannot hold. */
  DATETIME_FIELD_OVERFLOW: '22008',
  /** `25001`: a `transaction()` called while another runs on the same connection. */
  ACTIVE_SQL_TRANSACTION: '25001',
  /** `25000`: a `transaction()` whose function returned with an inserter still open (it rolled back). */
  INVALID_TRANSACTION_STATE: '25000',
  /** `25P02`: a transaction was rolled back, not committed, because a statement in it failed. */
  IN_FAILED_SQL_TRANSACTION: '25P02',
  /** `0A000`: something hyperd or this package does not support. */
  FEATURE_NOT_SUPPORTED: '0A000',
  /** `54000`: a value too large for where it goes (a text value past the longest JavaScript string). */
  PROGRAM_LIMIT_EXCEEDED: '54000',
  /**
   * `58000`: hyperd could not be started or stopped (not found, not
   * executable, failed, too slow to start); or an Arrow read or input
   * without the `apache-arrow` package installed.
   */
  SYSTEM_ERROR: '58000',
  /**
   * `55006`: the database file is in use by another connection or server;
   * or the connection is, by the insert whose row source made the call.
   */
  OBJECT_IN_USE: '55006',
  /** `58S01`: hyperd cannot use the database path (e.g. its directory does not exist). */
  DATABASE_PATH: '58S01',
  /** `42501`: access refused (a wrong password or user). */
  INSUFFICIENT_PRIVILEGE: '42501',
  /** `28000`: no password for a server that requires one (a TCP `HyperProcess`: pass `password: hyper.password`). */
  INVALID_AUTHORIZATION: '28000',
  /** `08P01`: the server broke the protocol (it is no hyperd). */
  PROTOCOL_VIOLATION: '08P01',
  /** `42P04`: `createMode: 'create'` on a database that exists. */
  DUPLICATE_DATABASE: '42P04',
  /** `42809`: the file is no `.hyper` database. */
  WRONG_OBJECT_TYPE: '42809',
  /** `55000`: gRPC `async`/`adaptive` results on a server that does not persist them (`grpc_persist_results`). */
  OBJECT_NOT_IN_PREREQUISITE_STATE: '55000',
  /** `XX000`: a failure inside this package or napi (a bug: please report it), `cause` holding napi's error. */
  INTERNAL_ERROR: 'XX000',
} as const

export interface HyperErrorFields {
  code: string
  message: string
  detail?: string | undefined
  hint?: string | undefined
  /** 1-based character position in the SQL text. */
  position?: number | undefined
  severity?: string | undefined
  /** The inserted row a value was refused in (0-based, counted over the whole insert). */
  row?: number | undefined
  /** The column a value was refused for. */
  column?: string | undefined
  cause?: unknown | undefined
}

export class HyperError extends Error {
  /** The SQLSTATE (see `ErrorCode`). */
  readonly code: string
  readonly detail?: string | undefined
  readonly hint?: string | undefined
  readonly position?: number | undefined
  readonly severity?: string | undefined
  /** For a refused insert value: its row (0-based, over the whole insert). */
  readonly row?: number | undefined
  /**
   * The column the error is about, when it names one: a refused insert
   * value's, an Arrow field's that does not fit the table, or the server's.
   */
  readonly column?: string | undefined

  constructor(fields: HyperErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.name = 'HyperError'
    this.code = fields.code
    this.detail = fields.detail
    this.hint = fields.hint
    this.position = fields.position
    this.severity = fields.severity
    if (fields.row !== undefined) this.row = fields.row
    if (fields.column !== undefined) this.column = fields.column
  }
}

/** The native layer's JSON: the fields, with the cause chain as messages. */
type Payload = Omit<HyperErrorFields, 'cause'> & { cause?: string[] }

/**
 * The statuses napi gives an argument it could not convert (`42` where a
 * `string` goes: "StringExpected"), before our code runs.
 */
const NAPI_ARGUMENT = /^(InvalidArg|[A-Za-z]+Expected)$/

/** napi's other statuses: a failure of napi or of the native layer itself. */
const NAPI_STATUS =
  /^(GenericFailure|PendingException|Cancelled|EscapeCalledTwice|HandleScopeMismatch|CallbackScopeMismatch|QueueFull|Closing|WouldDeadlock|NoExternalBuffersAllowed|Unknown)$/

/** The fields of the native layer's JSON payload in `e`'s message, if it has one. */
function payload(e: Error): Payload | undefined {
  // Thrown before a Promise existed, napi prefixes the payload with "Error: ".
  const at = e.message.indexOf('{"')
  if (at < 0 || at > 16) {
    return undefined
  }
  try {
    const p = JSON.parse(e.message.slice(at)) as Payload
    return typeof p.code === 'string' && typeof p.message === 'string' ? p : undefined
  } catch {
    return undefined
  }
}

/**
 * The native layer's error (its message is a JSON payload) as a
 * `HyperError`; napi's own refusal of an argument as one with 22023, and
 * any other failure of napi as one with XX000.
 */
export function toHyperError(e: unknown): unknown {
  if (!(e instanceof Error) || e instanceof HyperError) {
    return e
  }
  const status = (e as { code?: unknown }).code
  if (typeof status === 'string' && NAPI_ARGUMENT.test(status)) {
    return invalidArgument(e.message.trim(), e)
  }
  const p = payload(e)
  if (p === undefined) {
    return typeof status === 'string' && NAPI_STATUS.test(status)
      ? new HyperError({ code: ErrorCode.INTERNAL_ERROR, message: e.message, cause: e })
      : e
  }
  const causes = p.cause ?? []
  let cause: Error | undefined
  for (let i = causes.length - 1; i >= 0; i--) {
    cause = new Error(causes[i], cause === undefined ? undefined : { cause })
  }
  return new HyperError({ ...p, cause })
}

/**
 * Awaits `native` (a Promise, or a function that makes one and may throw
 * first), turning a native error into a `HyperError`.
 */
export async function call<T>(native: Promise<T> | (() => Promise<T>)): Promise<T> {
  try {
    return await (typeof native === 'function' ? native() : native)
  } catch (e) {
    throw toHyperError(e)
  }
}

/** Runs `f`, turning a native error into a `HyperError`. */
export function callSync<T>(f: () => T): T {
  try {
    return f()
  } catch (e) {
    throw toHyperError(e)
  }
}

/** 22023: an argument refused before anything was sent. */
export function invalidArgument(message: string, cause?: unknown): HyperError {
  return new HyperError({ code: ErrorCode.INVALID_PARAMETER_VALUE, message: `invalid argument: ${message}`, cause })
}

export function closedError(): HyperError {
  return new HyperError({ code: ErrorCode.CONNECTION_CLOSED, message: 'the connection was closed' })
}

export function canceledError(reason: unknown): HyperError {
  return new HyperError({
    code: ErrorCode.QUERY_CANCELED,
    message: 'the query was cancelled by its AbortSignal',
    cause: reason,
  })
}

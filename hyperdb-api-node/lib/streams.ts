/**
 * The one place a native result stream is driven from JS: `next()` calls,
 * `AbortSignal`s, early exits. Every read style (`query`, `queryColumns`,
 * `queryArrow`) goes through `NativeReader`.
 */
import { call, canceledError } from './errors'

/** What `NativeBatchStream` and `NativeIpcStream` have in common. */
export interface NativeStream<T> {
  next(): Promise<T[]>
  cancel(): Promise<void>
  close(): void
}

/**
 * Drives one native stream. `close()` abandons the rest of the result at
 * once (the connection is free for the next call); an aborted `signal`
 * cancels the statement on the server and rejects the pending `next()`.
 */
export class NativeReader<T> {
  private done = false
  private abortError: unknown = null
  private readonly onAbort?: () => void

  constructor(
    private readonly stream: NativeStream<T>,
    private readonly signal?: AbortSignal,
  ) {
    if (signal !== undefined) {
      this.onAbort = () => {
        this.abortError = canceledError(signal.reason)
        this.stream.cancel().catch(() => {})
      }
      signal.addEventListener('abort', this.onAbort, { once: true })
    }
  }

  /** The next items (at least one), or `null` at the end. */
  async next(): Promise<T[] | null> {
    if (this.done) return null
    if (this.abortError !== null) {
      this.close()
      throw this.abortError
    }
    let items: T[]
    try {
      items =
        this.signal === undefined ? await call(this.stream.next()) : await this.raceAbort(call(this.stream.next()))
    } catch (e) {
      this.close()
      throw this.abortError ?? e
    }
    if (items.length === 0) {
      this.close()
      return null
    }
    return items
  }

  private raceAbort(p: Promise<T[]>): Promise<T[]> {
    const signal = this.signal as AbortSignal
    return new Promise<T[]>((resolve, reject) => {
      const aborted = () => reject(this.abortError ?? canceledError(signal.reason))
      if (signal.aborted) {
        aborted()
        return
      }
      signal.addEventListener('abort', aborted, { once: true })
      p.then(
        (v) => {
          signal.removeEventListener('abort', aborted)
          resolve(v)
        },
        (e) => {
          signal.removeEventListener('abort', aborted)
          reject(e)
        },
      )
    })
  }

  /** Abandons the rest of the result. Safe to call more than once. */
  close(): void {
    if (this.done) return
    this.done = true
    if (this.onAbort !== undefined) {
      this.signal?.removeEventListener('abort', this.onAbort)
    }
    this.stream.close()
  }
}

/**
 * How long a read may keep the event loop busy between turns. A read's
 * items are handed out in microtasks (`for await` over items already
 * received never lets the loop run), so a reader that is faster than the
 * server would otherwise hold the loop for a whole handover and more.
 */
const LOOP_BUDGET_MS = 8

/** Gives the event loop a turn once `LOOP_BUDGET_MS` have passed since the last. */
class LoopTurns {
  private last = performance.now()

  /** The loop just had a turn (an awaited native call returned). */
  turned(): void {
    this.last = performance.now()
  }

  async maybeYield(): Promise<void> {
    if (performance.now() - this.last > LOOP_BUDGET_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      this.last = performance.now()
    }
  }
}

/**
 * The items of `reader` one at a time, giving the event loop a turn every
 * `LOOP_BUDGET_MS`; closes the reader when the consumer stops.
 */
export async function* eachItem<T>(reader: NativeReader<T>): AsyncIterableIterator<T> {
  const turns = new LoopTurns()
  try {
    for (let items = await reader.next(); items !== null; items = await reader.next()) {
      turns.turned()
      for (const item of items) {
        await turns.maybeYield()
        yield item
      }
    }
  } finally {
    reader.close()
  }
}

/** Rejects at once when `signal` is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw canceledError(signal.reason)
  }
}

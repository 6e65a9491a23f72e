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
 * A native stream's `next`, given what its open already read (`takeFirst`,
 * once; `null` when it read nothing) and whether it has ended since: a
 * small result makes no call across the boundary after its open.
 */
export function nextAfterOpen<H, T>(
  stream: { readonly ended: boolean },
  takeFirst: () => H | null,
  next: () => Promise<H>,
  convert: (handover: H) => T[],
): () => Promise<T[]> {
  let opened = false
  return async () => {
    if (!opened) {
      opened = true
      const first = takeFirst()
      if (first !== null) return convert(first)
    }
    return stream.ended ? [] : convert(await next())
  }
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
    this.throwIfAborted()
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

  /**
   * Throws once the signal has fired, closing the reader. Readers check
   * it between the items of a handover too: a handover of row batches
   * takes the JS thread hundreds of milliseconds to make into rows (16-32
   * batches of 64K rows), and an abort waited for all of them.
   */
  throwIfAborted(): void {
    if (this.abortError !== null) {
      this.close()
      throw this.abortError
    }
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
 * How long reads may keep the event loop from running its timers. A
 * read's items are handed out in microtasks (`for await` over items
 * already received never lets the loop run), so a reader that is faster
 * than the server would otherwise hold the loop for a whole handover and
 * more.
 */
const LOOP_BUDGET_MS = 4

/**
 * When the loop last ran its timers, kept current by a timer of its own
 * while reads check the budget. The budget counts from there, not from the
 * last yield or native callback: a `setImmediate` taken during the loop's
 * poll phase (where native results arrive) resumes in the same iteration,
 * before any timer, and several reads' callbacks share one iteration.
 * Measured on a 10M-row `query` (row objects, delay sampled every 1 ms):
 * counting from the last yield, p99 delay 23 ms with an 8 ms budget and
 * 11 ms with 2 ms; counting from the timers, 8-10 ms with 4 ms, at the
 * same speed.
 */
let timersRan = 0
/** When a read last checked the budget. */
let checked = 0
let clock: ReturnType<typeof setInterval> | undefined

/**
 * The clock stops itself once no read has checked for this long: a read
 * waiting on the server, or an iterator abandoned without `return()`,
 * leaves no timer waking an idle loop.
 */
const CLOCK_IDLE_MS = 50

function tick(): void {
  timersRan = performance.now()
  if (timersRan - checked > CLOCK_IDLE_MS) {
    clearInterval(clock)
    clock = undefined
  }
}

/** Whether the event loop's timers have waited `LOOP_BUDGET_MS`. */
export function loopBudgetSpent(): boolean {
  checked = performance.now()
  if (clock === undefined) {
    // Stopped while the loop was idle: its timers just had every chance.
    timersRan = checked
    clock = setInterval(tick, LOOP_BUDGET_MS / 2)
    clock.unref()
    return false
  }
  return checked - timersRan > LOOP_BUDGET_MS
}

/** Resolves once the event loop has had a turn. */
export function loopTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve))
}

/** Gives the event loop a turn when its timers have waited `LOOP_BUDGET_MS`. */
async function maybeYield(): Promise<void> {
  if (loopBudgetSpent()) await loopTurn()
}

/**
 * The items of `reader` one at a time, giving the event loop a turn every
 * `LOOP_BUDGET_MS`; closes the reader when the consumer stops.
 */
export async function* eachItem<T>(reader: NativeReader<T>): AsyncIterableIterator<T> {
  try {
    for (let items = await reader.next(); items !== null; items = await reader.next()) {
      for (const item of items) {
        await maybeYield()
        reader.throwIfAborted()
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

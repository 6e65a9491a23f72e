/**
 * Exact values for the types a JS primitive cannot hold without loss.
 *
 * - TIMESTAMP / TIMESTAMPTZ keep microseconds (a `Date` has milliseconds):
 *   `HyperTimestamp`, with `toDate()` when milliseconds are enough.
 * - TIME keeps microseconds: `HyperTime`.
 * - INTERVAL is months, days and microseconds, which no single number is:
 *   `HyperInterval`.
 * - NUMERIC has up to 38 digits: read as a decimal string; sent with
 *   `numeric('12.30')`.
 * - DATE reads as a `Date` at midnight UTC (always exact); send one with
 *   `dateOnly('2024-02-29')`, since a JS `Date` parameter is a TIMESTAMPTZ.
 */

const MICROS_PER_MILLI = 1000n
const MICROS_PER_DAY = 86_400_000_000n

function pad(n: number | bigint, width: number): string {
  return n.toString().padStart(width, '0')
}

/** A TIMESTAMP (`tz: false`) or TIMESTAMPTZ (`tz: true`), to the microsecond. */
export class HyperTimestamp {
  /** Microseconds since 1970-01-01 00:00:00 (UTC for TIMESTAMPTZ). */
  readonly micros: bigint
  readonly tz: boolean

  constructor(micros: bigint, tz = false) {
    this.micros = micros
    this.tz = tz
  }

  /** From a `Date` (whole milliseconds). */
  static fromDate(date: Date, tz = true): HyperTimestamp {
    const ms = date.getTime()
    if (Number.isNaN(ms)) {
      throw new RangeError('HyperTimestamp.fromDate: invalid Date')
    }
    return new HyperTimestamp(BigInt(ms) * MICROS_PER_MILLI, tz)
  }

  /** As a `Date`, dropping the sub-millisecond digits. */
  toDate(): Date {
    return new Date(Number(floorDiv(this.micros, MICROS_PER_MILLI)))
  }

  /** ISO 8601 with six fractional digits (`Z` for TIMESTAMPTZ). */
  toISOString(): string {
    const day = floorDiv(this.micros, MICROS_PER_DAY)
    const inDay = this.micros - day * MICROS_PER_DAY
    const date = new Date(Number(day) * 86_400_000)
    const y = date.getUTCFullYear()
    const year = y < 0 ? `-${pad(-y, 6)}` : y > 9999 ? `+${pad(y, 6)}` : pad(y, 4)
    const time = HyperTime.format(inDay)
    return `${year}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}T${time}${this.tz ? 'Z' : ''}`
  }

  toString(): string {
    return this.toISOString()
  }

  toJSON(): string {
    return this.toISOString()
  }

  equals(other: HyperTimestamp): boolean {
    return this.micros === other.micros && this.tz === other.tz
  }
}

/** A TIME of day, to the microsecond (`24:00:00` is valid). */
export class HyperTime {
  /** Microseconds since midnight. */
  readonly micros: bigint

  constructor(micros: bigint) {
    this.micros = micros
  }

  static format(micros: bigint): string {
    const s = micros / 1_000_000n
    const frac = micros % 1_000_000n
    return `${pad(s / 3600n, 2)}:${pad((s / 60n) % 60n, 2)}:${pad(s % 60n, 2)}.${pad(frac, 6)}`
  }

  toString(): string {
    return HyperTime.format(this.micros)
  }

  toJSON(): string {
    return this.toString()
  }
}

/** An INTERVAL: months, days and microseconds, kept apart as SQL keeps them. */
export class HyperInterval {
  readonly months: number
  readonly days: number
  readonly micros: bigint

  constructor(months: number, days: number, micros: bigint) {
    this.months = months
    this.days = days
    this.micros = micros
  }

  toString(): string {
    return `${this.months} mons ${this.days} days ${this.micros < 0n ? '-' : ''}${HyperTime.format(this.micros < 0n ? -this.micros : this.micros)}`
  }

  toJSON(): { months: number; days: number; micros: string } {
    return { months: this.months, days: this.days, micros: this.micros.toString() }
  }
}

/** A NUMERIC parameter, exact: `numeric('12345678901234567890.12')`. */
export class HyperNumeric {
  readonly value: string

  constructor(value: string) {
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(value)) {
      throw new RangeError(`not a decimal number: ${JSON.stringify(value)}`)
    }
    this.value = value
  }

  toString(): string {
    return this.value
  }
}

/** A DATE parameter: `dateOnly('2024-02-29')`. */
export class HyperDate {
  readonly value: string

  constructor(value: string) {
    this.value = value
  }

  toString(): string {
    return this.value
  }
}

export function numeric(value: string): HyperNumeric {
  return new HyperNumeric(value)
}

export function dateOnly(value: string): HyperDate {
  return new HyperDate(value)
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

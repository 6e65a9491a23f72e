// insertArrow: apache-arrow tables, batches and raw IPC bytes into a table,
// checked against the table before anything is sent; nothing is stored on
// any error, and the connection stays usable.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import * as arrow from 'apache-arrow'
import { setupHyper, rejectsHyper } from './helpers.mjs'

const ctx = setupHyper()

async function freshTable(conn, name) {
  await conn.executeCommand(
    `CREATE TABLE ${name} (id INTEGER NOT NULL, big BIGINT, x DOUBLE PRECISION, s TEXT, ok BOOLEAN, ts TIMESTAMP)`,
  )
}

function sample(n, offset = 0) {
  const id = Int32Array.from({ length: n }, (_, i) => i + offset)
  return arrow.makeTable({
    id,
    big: BigInt64Array.from({ length: n }, (_, i) => BigInt(i + offset) * 1_000_000_007n),
    x: Float64Array.from({ length: n }, (_, i) => (i % 7 === 0 ? NaN : i * 0.25)),
  })
}

/** A table with every column of `freshTable`, nullable ones with NULLs. */
function fullTable(n) {
  const schema = new arrow.Schema([
    new arrow.Field('id', new arrow.Int32(), false),
    new arrow.Field('big', new arrow.Int64(), true),
    new arrow.Field('x', new arrow.Float64(), true),
    new arrow.Field('s', new arrow.Utf8(), true),
    new arrow.Field('ok', new arrow.Bool(), true),
    new arrow.Field('ts', new arrow.TimestampMicrosecond(), true),
  ])
  const rows = Array.from({ length: n }, (_, i) => ({
    id: i,
    big: i % 3 === 0 ? null : BigInt(i) - 9_000_000_000_000_000_000n,
    x: i % 5 === 0 ? null : -i / 3,
    s: i % 4 === 0 ? null : `grüße ${i} 😀`,
    ok: i % 6 === 0 ? null : i % 2 === 0,
    ts: i % 7 === 0 ? null : 1_700_000_000_123_456n + BigInt(i),
  }))
  const vectors = Object.fromEntries(
    schema.fields
      .filter((f) => f.name !== 'ts')
      .map((f) => [
        f.name,
        arrow.vectorFromArray(
          rows.map((r) => r[f.name]),
          f.type,
        ),
      ]),
  )
  // apache-arrow's builders take timestamps in milliseconds: microseconds
  // go in as raw values with a validity bitmap.
  const nullBitmap = new Uint8Array(Math.ceil(n / 8))
  rows.forEach((r, i) => {
    if (r.ts !== null) nullBitmap[i >> 3] |= 1 << (i & 7)
  })
  vectors.ts = arrow.makeVector(
    arrow.makeData({
      type: schema.fields[5].type,
      length: n,
      nullCount: rows.filter((r) => r.ts === null).length,
      nullBitmap,
      data: BigInt64Array.from(rows, (r) => r.ts ?? 0n),
    }),
  )
  return new arrow.Table(schema, vectors)
}

describe('insertArrow', () => {
  test('a Table, a RecordBatch, batches and IPC bytes all go in, exactly', async () => {
    const conn = await ctx.connect()
    await freshTable(conn, 'every')
    const t = fullTable(500)
    assert.equal(await conn.insertArrow('every', t), 500)
    const back = await conn.queryAll('SELECT * FROM every ORDER BY id')
    assert.equal(back.length, 500)
    for (const [i, r] of back.entries()) {
      assert.equal(r.id, i)
      assert.equal(r.big, i % 3 === 0 ? null : BigInt(i) - 9_000_000_000_000_000_000n)
      assert.equal(r.x, i % 5 === 0 ? null : -i / 3)
      assert.equal(r.s, i % 4 === 0 ? null : `grüße ${i} 😀`)
      assert.equal(r.ok, i % 6 === 0 ? null : i % 2 === 0)
      assert.equal(r.ts === null ? null : r.ts.micros, i % 7 === 0 ? null : 1_700_000_000_123_456n + BigInt(i))
    }

    await conn.executeCommand('CREATE TABLE part (id INTEGER NOT NULL, big BIGINT, x DOUBLE PRECISION)')
    const a = sample(1000)
    const b = sample(2000, 1000)
    assert.equal(await conn.insertArrow('part', a.batches[0]), 1000)
    assert.equal(await conn.insertArrow('part', b.batches), 2000)
    const bytes = arrow.tableToIPC(sample(300, 3000), 'stream')
    assert.equal(await conn.insertArrow({ name: 'part' }, bytes), 300)
    const half = bytes.length >> 1
    assert.equal(await conn.insertArrow('part', [bytes.subarray(0, half), bytes.subarray(half)]), 300)
    const [n, sum, nans] = await conn.queryOne(
      "SELECT count(*), sum(id::BIGINT), count(*) FILTER (WHERE x = 'NaN') FROM part",
      [],
      { rowMode: 'array' },
    )
    assert.equal(n, 3600n)
    assert.equal(sum, BigInt((3299 * 3300) / 2) + BigInt(((3000 + 3299) * 300) / 2))
    assert.ok(nans > 0n)
  })

  test('empty batches insert nothing, alone or among others', async () => {
    const conn = await ctx.connect()
    await conn.executeCommand('CREATE TABLE gaps (id INTEGER NOT NULL, big BIGINT, x DOUBLE PRECISION)')
    const empty = sample(0)
    assert.equal(await conn.insertArrow('gaps', empty), 0)
    assert.equal(await conn.insertArrow('gaps', empty.batches[0]), 0)
    const batches = [sample(3).batches[0], empty.batches[0], sample(2, 3).batches[0]]
    assert.equal(await conn.insertArrow('gaps', batches), 5)
    assert.deepEqual(
      (await conn.queryAll('SELECT id FROM gaps ORDER BY id', [], { rowMode: 'array' })).map((r) => r[0]),
      [0, 1, 2, 3, 4],
    )
    // No rows is still a question to the table.
    await rejectsHyper(() => conn.insertArrow('no_such_table', empty), '42P01')
    // An empty batch has the columns of the others too (it was skipped
    // unchecked); nothing of the batches before it is stored.
    const other = arrow.makeTable({ id: Int32Array.from([]), big: Float64Array.from([]) }).batches[0]
    const e = await rejectsHyper(() => conn.insertArrow('gaps', [sample(3).batches[0], other]), '42804')
    assert.equal(e.column, 'big')
    assert.match(e.message, /column 2 is `big` Float64 in a later batch, `big` Int64 in the first/)
    const renamed = arrow.makeTable({ id: Int32Array.from([]), huge: BigInt64Array.from([]) }).batches[0]
    const r = await rejectsHyper(() => conn.insertArrow('gaps', [renamed, ...sample(2, 10).batches]), '42804')
    assert.match(r.message, /column 2 is `big` Int64 in a later batch, `huge` Int64 in the first/)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM gaps'), 5n)
  })

  test('data without rows still has its schema checked', async () => {
    const conn = await ctx.connect()
    await conn.executeCommand('CREATE TABLE checked (id INTEGER NOT NULL, s TEXT)')
    // Before: each of these returned 0, as if the data fitted.
    const wrong = arrow.makeTable({ nope: Float64Array.from([]), other: Int32Array.from([]) })
    // Repeated: the refusal used to be lost now and then (12 of 300 tries),
    // when the insert's task had not read the schema before the abort.
    for (let round = 0; round < 100; round++) {
      await rejectsHyper(() => conn.insertArrow('checked', wrong), '42804', `round ${round}`)
    }
    await rejectsHyper(() => conn.insertArrow('checked', wrong.batches), '42804')
    const dict = arrow.tableFromArrays({ id: Int32Array.from([]), s: [] })
    await rejectsHyper(() => conn.insertArrow('checked', dict), '42804')
    const fits = new arrow.Table({
      id: arrow.vectorFromArray([], new arrow.Int32()),
      s: arrow.vectorFromArray([], new arrow.Utf8()),
    })
    assert.equal(await conn.insertArrow('checked', fits), 0)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM checked'), 0n)
    const one = new arrow.Table({
      id: arrow.vectorFromArray([1], new arrow.Int32()),
      s: arrow.vectorFromArray(['a'], new arrow.Utf8()),
    })
    assert.equal(await conn.insertArrow('checked', one), 1)
  })

  test('a schema that does not fit the table is refused before sending; nothing is stored', async () => {
    const conn = await ctx.connect()
    await freshTable(conn, 'strict')
    const wrongType = arrow.makeTable({ id: Float64Array.from([1, 2]) })
    const typeError = await rejectsHyper(() => conn.insertArrow('strict', wrongType), '42804')
    // The column as a field, not only in the message (before: undefined).
    assert.equal(typeError.column, 'id')
    const unknownColumn = arrow.makeTable({ id: Int32Array.from([1]), nope: Int32Array.from([1]) })
    await rejectsHyper(() => conn.insertArrow('strict', unknownColumn), '42804')
    assert.equal(await conn.queryScalar('SELECT count(*) FROM strict'), 0n)
    assert.equal(await conn.queryScalar('SELECT 7'), 7)
  })

  test('CHAR(n) and VARCHAR(n) values are checked however they come: batches or IPC bytes', async () => {
    const conn = await ctx.connect()
    await conn.executeCommand('CREATE TABLE bounded (id INTEGER NOT NULL, c CHAR(3), v VARCHAR(3))')
    const rows = (id, c, v) =>
      new arrow.Table({
        id: arrow.vectorFromArray([id], new arrow.Int32()),
        c: arrow.vectorFromArray([c], new arrow.Utf8()),
        v: arrow.vectorFromArray([v], new arrow.Utf8()),
      })
    for (const [label, as] of [
      ['a Table', (t) => t],
      ['IPC bytes', (t) => arrow.tableToIPC(t, 'stream')],
    ]) {
      await rejectsHyper(() => conn.insertArrow('bounded', as(rows(9, 'abcd', 'a'))), '22001', label)
      await rejectsHyper(() => conn.insertArrow('bounded', as(rows(9, 'a', 'ab    '))), '22001', label)
    }
    assert.equal(await conn.queryScalar('SELECT count(*) FROM bounded'), 0n)
    // CHAR(n) drops spaces past n, as Tableau's Hyper API stores them.
    assert.equal(await conn.insertArrow('bounded', rows(1, 'abc   ', 'ab ')), 1)
    assert.equal(await conn.insertArrow('bounded', arrow.tableToIPC(rows(2, 'pq      ', 'pq '), 'stream')), 1)
    assert.deepStrictEqual(
      await conn.queryAll("SELECT id, c || '|' AS c, v || '|' AS v FROM bounded ORDER BY id", [], { rowMode: 'array' }),
      [
        [1, 'abc|', 'ab |'],
        [2, 'pq|', 'pq |'],
      ],
    )
  })

  test('a NULL in a NOT NULL column, a missing table and bad input reject; the connection works', async () => {
    const conn = await ctx.connect()
    await freshTable(conn, 'nn')
    const withNull = new arrow.Table({
      id: arrow.vectorFromArray([1, null], new arrow.Int32()),
    })
    const e = await rejectsHyper(() => conn.insertArrow('nn', withNull))
    assert.ok(['23502', '42804'].includes(e.code), e.code)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn'), 0n)
    await rejectsHyper(() => conn.insertArrow('no_such_table', sample(3)), '42P01')
    await rejectsHyper(() => conn.insertArrow('nn', { not: 'arrow' }), '22023')
    await rejectsHyper(() => conn.insertArrow('nn', Uint8Array.from([1, 2, 3])))
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn'), 0n)
    assert.equal(await conn.queryScalar('SELECT 8'), 8)
    // IPC bytes into a table whose columns hyperd takes unchecked: the NULL
    // is named (hyperd alone fails the COPY with XX001, naming nothing).
    await conn.executeCommand('CREATE TABLE nn_ipc (id BIGINT NOT NULL, v DOUBLE PRECISION)')
    const ipc = arrow.tableToIPC(
      new arrow.Table({
        id: arrow.vectorFromArray([1n, 2n, null, 4n], new arrow.Int64()),
        v: arrow.vectorFromArray([0.5, 1.5, 2.5, 3.5], new arrow.Float64()),
      }),
      'stream',
    )
    const ipcError = await rejectsHyper(() => conn.insertArrow('nn_ipc', ipc), '23502')
    assert.equal(ipcError.row, 2)
    assert.equal(ipcError.column, 'id')
    assert.equal(await conn.queryScalar('SELECT count(*) FROM nn_ipc'), 0n)
    assert.equal(await conn.queryScalar('SELECT 9'), 9)
  })

  test('IPC bytes whose buffers are shorter than their rows say are refused, naming the column', async () => {
    // Three NUMERIC(5,2) values need 48 bytes; the batch's metadata says 16.
    // Before: arrow-ipc panicked in a tokio worker (caught, with a
    // backtrace line on stderr) and the error blamed "the server".
    const conn = await ctx.connect()
    await conn.executeCommand('CREATE TABLE priced (price NUMERIC(5,2))')
    const data = new Uint32Array(12)
    data[0] = 12345
    data[4] = 1
    data[8] = 99
    const price = arrow.makeVector(
      arrow.makeData({ type: new arrow.Decimal(2, 5, 128), length: 3, nullCount: 0, data }),
    )
    const ipc = arrow.tableToIPC(new arrow.Table({ price }), 'stream')
    assert.equal(await conn.insertArrow('priced', ipc), 3)
    // The values buffer's entry in the batch's metadata: offset 0, length 48.
    const entry = new Uint8Array(16)
    entry[8] = 48
    const at = Buffer.from(ipc).lastIndexOf(Buffer.from(entry))
    assert.ok(at > 0, 'the values buffer entry')
    const bad = Uint8Array.from(ipc)
    bad[at + 8] = 16
    const e = await rejectsHyper(() => conn.insertArrow('priced', bad))
    assert.match(e.message, /column `price`: a values buffer of 16 bytes where its rows need 48/)
    assert.doesNotMatch(e.message, /server|panic/)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM priced'), 3n)
    assert.equal(await conn.insertArrow('priced', ipc), 3)
  })

  test('slices (bitmaps starting mid-byte) and batches past one piece go in exactly', async () => {
    const conn = await ctx.connect()
    await freshTable(conn, 'sliced')
    const whole = fullTable(1000)
    // Rows 3..999 then 1..2: bit offsets 3 and 1, values from each slice's row 0.
    assert.equal(await conn.insertArrow('sliced', whole.slice(3)), 997)
    assert.equal(await conn.insertArrow('sliced', whole.slice(1, 3)), 2)
    const back = await conn.queryAll('SELECT * FROM sliced ORDER BY id')
    assert.equal(back.length, 999)
    for (const r of back) {
      const i = r.id
      assert.equal(r.big, i % 3 === 0 ? null : BigInt(i) - 9_000_000_000_000_000_000n, `big ${i}`)
      assert.equal(r.x, i % 5 === 0 ? null : -i / 3, `x ${i}`)
      assert.equal(r.s, i % 4 === 0 ? null : `grüße ${i} 😀`, `s ${i}`)
      assert.equal(r.ok, i % 6 === 0 ? null : i % 2 === 0, `ok ${i}`)
      assert.equal(r.ts === null ? null : r.ts.micros, i % 7 === 0 ? null : 1_700_000_000_123_456n + BigInt(i))
    }
    assert.equal(back[0].id, 1)

    // One batch of 150001 rows goes in 64K-row pieces; text offsets rebased per piece.
    await conn.executeCommand('CREATE TABLE big_batch (id INTEGER NOT NULL, s TEXT)')
    const n = 150_001
    const ids = Int32Array.from({ length: n }, (_, i) => i)
    const s = arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => (i % 1000 === 0 ? null : `v${i}`)),
      new arrow.Utf8(),
    )
    const t = new arrow.Table({ id: arrow.makeVector(ids), s })
    assert.equal(t.batches.length, 1)
    assert.equal(await conn.insertArrow('big_batch', t), n)
    const [count, sum, lengths, nulls, mismatched] = await conn.queryOne(
      `SELECT count(*), sum(id::BIGINT), sum(length(s)), count(*) FILTER (WHERE s IS NULL),
              count(*) FILTER (WHERE s <> 'v' || id)
         FROM big_batch`,
      [],
      { rowMode: 'array' },
    )
    assert.equal(count, BigInt(n))
    assert.equal(sum, BigInt(((n - 1) * n) / 2))
    assert.equal(nulls, 151n)
    assert.equal(mismatched, 0n)
    let want = 0n
    for (let i = 0; i < n; i++) if (i % 1000 !== 0) want += BigInt(`v${i}`.length)
    assert.equal(lengths, want)
  })

  test('every flat Arrow type goes in by its buffers, exactly', async () => {
    const conn = await ctx.connect()
    await conn.executeCommand(
      `CREATE TABLE flat (i16 SMALLINT, i64 BIGINT, f32 REAL, n NUMERIC(38,4), d DATE, t TIME,
                          tz TIMESTAMPTZ, iv INTERVAL, b BYTEA)`,
    )
    const n = 3
    const bitmap = Uint8Array.from([0b011]) // row 2 NULL everywhere
    const data = (type, values, extra = {}) =>
      arrow.makeVector(arrow.makeData({ type, length: n, nullCount: 1, nullBitmap: bitmap, ...values, ...extra }))
    // NUMERIC(38,4): 128-bit two's complement in four 32-bit words.
    const dec = (v) => {
      const u = BigInt.asUintN(128, v)
      return [0n, 32n, 64n, 96n].map((k) => Number((u >> k) & 0xffffffffn))
    }
    const big = 10n ** 37n + 1234n
    const table = new arrow.Table({
      i16: data(new arrow.Int16(), { data: Int16Array.from([-32768, 32767, 0]) }),
      i64: data(new arrow.Int64(), { data: BigInt64Array.from([-(2n ** 63n), 2n ** 63n - 1n, 0n]) }),
      f32: data(new arrow.Float32(), { data: Float32Array.from([-0, Infinity, 0]) }),
      n: data(new arrow.Decimal(4, 38, 128), { data: Uint32Array.from([...dec(big), ...dec(-15n), 0, 0, 0, 0]) }),
      d: data(new arrow.DateDay(), { data: Int32Array.from([-719162, 2932896, 0]) }),
      t: data(new arrow.TimeMicrosecond(), { data: BigInt64Array.from([0n, 86_399_999_999n, 0n]) }),
      tz: data(new arrow.TimestampMicrosecond('UTC'), {
        data: BigInt64Array.from([-62135596800000000n, 253402300799999999n, 0n]),
      }),
      iv: data(new arrow.IntervalMonthDayNano(), {
        data: new Int32Array(
          BigInt64Array.from([
            (1n << 32n) | 14n,
            -5_000n, // 14 months 1 day, -5 us
            BigInt.asUintN(64, (-3n << 32n) | 0n),
            86_400_000_000_000n, // 0 months -3 days, 1 day of ns
            0n,
            0n,
          ]).buffer,
        ),
      }),
      b: data(new arrow.Binary(), { data: Uint8Array.from([0, 255, 7]), valueOffsets: Int32Array.from([0, 0, 3, 3]) }),
    })
    assert.equal(await conn.insertArrow('flat', table), 3)
    const rows = await conn.queryAll(
      `SELECT i16, i64, f32, n::TEXT AS n, d::TEXT AS d, t::TEXT AS t, tz::TEXT AS tz, iv::TEXT AS iv, b
         FROM flat ORDER BY i16`,
    )
    const byI16 = new Map(rows.map((r) => [r.i16, r]))
    const lo = byI16.get(-32768)
    const hi = byI16.get(32767)
    assert.equal(lo.i64, -(2n ** 63n))
    assert.equal(hi.i64, 2n ** 63n - 1n)
    assert.ok(Object.is(lo.f32, -0))
    assert.equal(hi.f32, Infinity)
    assert.equal(lo.n, '1000000000000000000000000000000000.1234')
    assert.equal(hi.n, '-0.0015')
    assert.equal(lo.d, '0001-01-01')
    assert.equal(hi.d, '9999-12-31')
    assert.equal(lo.t, '00:00:00')
    assert.equal(hi.t, '23:59:59.999999')
    assert.match(lo.tz, /^0001-01-01 00:00:00/)
    assert.match(hi.tz, /^9999-12-31 23:59:59.999999/)
    // ISO 8601, as hyperd prints intervals: 14 months 1 day -5 us; -3 days +24 h.
    assert.equal(lo.iv, 'P1Y2M1DT-0.000005S')
    assert.equal(hi.iv, 'P-3DT24H')
    assert.deepEqual([...lo.b], [])
    assert.deepEqual([...hi.b], [0, 255, 7])
    const nullRow = rows.find((r) => r.i16 === null)
    assert.deepEqual(Object.values(nullRow), Array(9).fill(null))
  })

  test('buffers that do not hold the rows, and dictionaries, are refused; nothing is stored', async () => {
    const conn = await ctx.connect()
    await conn.executeCommand('CREATE TABLE guarded (id INTEGER NOT NULL, s TEXT)')
    // Offsets past the bytes: refused before anything is sent.
    const badText = arrow.makeVector(
      arrow.makeData({
        type: new arrow.Utf8(),
        length: 2,
        nullCount: 0,
        data: Uint8Array.from([97]),
        valueOffsets: Int32Array.from([0, 1, 9]),
      }),
    )
    const bad = new arrow.Table({ id: arrow.makeVector(Int32Array.from([1, 2])), s: badText })
    const e = await rejectsHyper(() => conn.insertArrow('guarded', bad))
    assert.match(e.message, /offset|bytes|hold/i)
    // A NULL id in the second 64K piece: the first piece is not stored either.
    const n = 70_000
    const ids = arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => (i === 69_999 ? null : i)),
      new arrow.Int32(),
    )
    const withNull = new arrow.Table({ id: ids, s: arrow.vectorFromArray(Array(n).fill('x'), new arrow.Utf8()) })
    const nullError = await rejectsHyper(() => conn.insertArrow('guarded', withNull), '23502')
    assert.equal(nullError.row, 69_999)
    // A dictionary column goes the IPC way, and its error says what to do.
    const dict = arrow.tableFromArrays({ id: Int32Array.from([1]), s: ['a'] })
    assert.equal(dict.schema.fields[1].typeId, arrow.Type.Dictionary)
    const d = await rejectsHyper(() => conn.insertArrow('guarded', dict), '42804')
    assert.match(d.message, /Dictionary\(Int32, Utf8\)/)
    // After a plain batch, its schema is not the first's. Before: 22023,
    // "record batches and raw IPC bytes cannot be mixed in one insert".
    const plain = new arrow.Table({
      id: arrow.makeVector(Int32Array.from([2])),
      s: arrow.vectorFromArray(['b'], new arrow.Utf8()),
    })
    const mixed = await rejectsHyper(() => conn.insertArrow('guarded', [...plain.batches, ...dict.batches]), '42804')
    assert.equal(mixed.column, 's')
    assert.match(mixed.message, /column 2 is `s` Dictionary<Int32, Utf8> in a later batch, `s` Utf8 in the first/)
    assert.equal(await conn.queryScalar('SELECT count(*) FROM guarded'), 0n)
    assert.equal(
      await conn.insertArrow(
        'guarded',
        new arrow.Table({
          id: arrow.makeVector(Int32Array.from([5])),
          s: arrow.vectorFromArray(['ok'], new arrow.Utf8()),
        }),
      ),
      1,
    )
  })
})

describe('insertArrow pieces', () => {
  test('end at 16 MiB of text and binary values, and hold at least one row', async () => {
    // The cut every batch handed over as buffers goes through (lib/arrow-input.ts).
    const { rowsWithin } = await import('../dist/arrow-input.js')
    const M = 1024 * 1024
    const offsets = Int32Array.from([0, 10 * M, 20 * M, 20 * M + 5, 60 * M, 60 * M + 1])
    const columns = [{ offsets: undefined }, { offsets }]
    assert.equal(rowsWithin(columns, 0, 5), 1, '10 MiB, then 20 MiB: one row')
    assert.equal(rowsWithin(columns, 1, 4), 2, '10 MiB and 5 bytes fit')
    assert.equal(rowsWithin(columns, 3, 2), 1, 'a 40 MiB row goes alone')
    assert.equal(rowsWithin(columns, 4, 1), 1)
    assert.equal(rowsWithin([{ offsets: undefined }], 0, 65_536), 65_536, 'fixed-width columns: rows alone bound it')
    const small = Int32Array.from({ length: 65_537 }, (_, i) => i * 10)
    assert.equal(rowsWithin([{ offsets: small }], 0, 65_536), 65_536)
  })
})

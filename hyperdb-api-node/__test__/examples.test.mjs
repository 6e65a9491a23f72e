// The examples run as a user runs them (`node examples/X.mjs FILE`, the
// package imported by its name), each starting its own hyperd; and the
// README's Node quick start is `examples/quickstart.mjs`, as it says.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { makeTempDir, removeDir } from './helpers.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const examples = path.join(here, '..', 'examples')

async function runExample(name) {
  const dir = makeTempDir()
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(examples, name), path.join(dir, 'x.hyper')],
      {
        timeout: 120_000,
      },
    )
    return stdout
  } finally {
    removeDir(dir)
  }
}

test('examples/quickstart.mjs runs and prints its rows and batches', async () => {
  const out = await runExample('quickstart.mjs')
  // Five rows of sensor 7 (id, value), then the int32 column's first id, then batch sizes.
  const lines = out.trim().split('\n')
  assert.equal(lines[0], '0 1.5')
  assert.match(lines[1], /^7 0\.7/)
  const batches = lines.filter((l) => / rows$/.test(l)).map((l) => Number(l.split(' ')[0]))
  assert.equal(
    batches.reduce((a, b) => a + b, 0),
    1_000_001,
  )
})

test('examples/streaming-insert.mjs and arrow-roundtrip.mjs run', async () => {
  for (const name of ['streaming-insert.mjs', 'arrow-roundtrip.mjs']) {
    const out = await runExample(name)
    assert.ok(out.length > 0, `${name} printed nothing`)
  }
})

test("the README's Node quick start is examples/quickstart.mjs", () => {
  const readme = readFileSync(path.join(here, '..', '..', 'README.md'), 'utf8')
  const block = readme
    .split('```js\n')
    .slice(1)
    .map((b) => b.slice(0, b.indexOf('```')))
    .find((b) => b.includes('HyperProcess.start()') && b.includes("database: 'sensors.hyper'"))
  assert.ok(block !== undefined, 'the quick-start block is in the README')
  const code = readFileSync(path.join(examples, 'quickstart.mjs'), 'utf8')
  // The file adds a header comment and takes its database from argv.
  const body = code
    .slice(code.indexOf('import '))
    .replace("database: process.argv[2] ?? 'sensors.hyper'", "database: 'sensors.hyper'")
  const squash = (s) => s.replace(/\s+/g, ' ').trim()
  assert.equal(squash(body), squash(block))
})

// The published typings (dist/*.d.ts) as a strict TypeScript user meets
// them, library checks on: typings/usage.ts must compile, and each of its
// `@ts-expect-error` lines must be an error.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)

test('typings: strict usage compiles, misuse does not', () => {
  const tsc = require.resolve('typescript/bin/tsc')
  const project = fileURLToPath(new URL('./typings/tsconfig.json', import.meta.url))
  const run = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' })
  assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`)
})

// `npm pack` of a checkout that is not built is refused (prepack), naming
// what is missing, instead of packing a package that fails on import.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { missingBuildOutputs } from '../scripts/check-built.mjs'

const pkgDir = fileURLToPath(new URL('..', import.meta.url))

/** A copy of the package's manifest and scripts, with `built` of its build outputs. */
function checkout(built) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hyperdb-api-unbuilt-'))
  fs.copyFileSync(path.join(pkgDir, 'package.json'), path.join(dir, 'package.json'))
  fs.cpSync(path.join(pkgDir, 'scripts'), path.join(dir, 'scripts'), { recursive: true })
  for (const file of built) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    fs.writeFileSync(path.join(dir, file), '')
  }
  return dir
}

test('the built package lacks nothing', () => {
  assert.deepEqual(missingBuildOutputs(pkgDir), [])
})

test('npm pack of an unbuilt checkout is refused, naming what is missing', (t) => {
  const dir = checkout(['dist/index.js', 'native/index.d.ts'])
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  assert.deepEqual(missingBuildOutputs(dir), ['dist/index.mjs', 'dist/index.d.ts', 'native/*.node'])
  const run = spawnSync('npm', ['pack', '--dry-run', '--offline'], { cwd: dir, encoding: 'utf8' })
  assert.notEqual(run.status, 0, `npm pack succeeded:\n${run.stdout}`)
  assert.match(
    run.stderr,
    /not built \(missing dist\/index\.mjs, dist\/index\.d\.ts, native\/\*\.node\): run `npm run build`/,
  )
  assert.deepEqual(
    fs.readdirSync(dir).filter((f) => f.endsWith('.tgz')),
    [],
  )
})

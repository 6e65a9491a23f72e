// The package as a user gets it: `npm pack` the built package, install the
// tarball into a fresh project outside the repository (so nothing resolves
// through the repository's node_modules), and run an ES module and a
// CommonJS program there against a real hyperd.
//
//   node scripts/pack-test.mjs      (after `npm run build`; hyperd from
//                                    HYPERD_PATH, else the repo's .hyperd/hyperd)
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { missingBuildOutputs, notBuiltMessage } from './check-built.mjs'

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const repoRoot = path.dirname(pkgDir)
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'))

// The addon is about 15 MB (5 MB packed) with symbols only; with line
// tables it was 74 MB. These limits catch a debug build, an unstripped one
// or stray files, not ordinary growth.
const MAX_PACKED_BYTES = 12 * 1024 * 1024
const MAX_UNPACKED_BYTES = 40 * 1024 * 1024

class TestFailure extends Error {}

function fail(message) {
  throw new TestFailure(message)
}

const started = performance.now()
let stepStarted = started
function step(name) {
  const now = performance.now()
  console.log(`pack-test: ${name} (${((now - stepStarted) / 1000).toFixed(1)} s)`)
  stepStarted = now
}

/** Runs a command to completion; fails with its output when it exits non-zero. */
function run(command, args, { cwd, env = process.env, timeoutMs = 120_000 } = {}) {
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 })
  const shown = `${command} ${args.join(' ')} (in ${cwd})`
  if (r.error !== undefined) fail(`${shown}: ${r.error.message}`)
  if (r.status !== 0) {
    fail(`${shown} exited with ${r.status ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  }
  return r.stdout
}

function isExecutableFile(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** hyperd as the package finds it: HYPERD_PATH (a file or its directory), else the repo's install. */
function findHyperd() {
  const configured = process.env.HYPERD_PATH || path.join(repoRoot, '.hyperd', 'hyperd')
  for (const candidate of [configured, path.join(configured, 'hyperd')]) {
    if (isExecutableFile(candidate)) return path.resolve(candidate)
  }
  fail(`no hyperd at ${configured}: run \`make hyperd\` (or scripts/install-hyperd.mjs), or set HYPERD_PATH`)
}

function checkBuilt() {
  const missing = missingBuildOutputs(pkgDir)
  if (missing.length > 0) fail(notBuiltMessage(missing))
}

/** Only what `files` lists (plus what npm always adds) may be in the tarball. */
function checkContents(packed) {
  const allowed = [/^dist\//, /^native\/index\.d\.ts$/, /^native\/[^/]+\.node$/, /^scripts\/install-hyperd\.mjs$/]
  const always = /^(package\.json|README(\.md)?|LICEN[CS]E.*)$/i
  const paths = packed.files.map((f) => f.path)
  const stray = paths.filter((p) => !always.test(p) && !allowed.some((re) => re.test(p)))
  if (stray.length > 0) fail(`the tarball has files outside \`files\`: ${stray.join(', ')}`)
  for (const needed of [
    'dist/index.js',
    'dist/index.mjs',
    'dist/index.d.ts',
    'package.json',
    'LICENSE-MIT',
    'LICENSE-APACHE',
  ]) {
    if (!paths.includes(needed)) fail(`the tarball lacks ${needed}`)
  }
  if (packed.size > MAX_PACKED_BYTES) fail(`the tarball is ${packed.size} bytes (limit ${MAX_PACKED_BYTES})`)
  if (packed.unpackedSize > MAX_UNPACKED_BYTES) {
    fail(`the package unpacks to ${packed.unpackedSize} bytes (limit ${MAX_UNPACKED_BYTES})`)
  }
}

/** The installed copy, as it is on disk: no sources, tests or other packages. */
function checkInstalled(project) {
  const installed = path.join(project, 'node_modules', pkg.name)
  for (const absent of ['lib', 'src', '__test__', 'examples', 'node_modules', 'Cargo.toml']) {
    if (fs.existsSync(path.join(installed, absent))) fail(`the installed package contains ${absent}`)
  }
  // No runtime dependencies, and apache-arrow is an optional peer npm must not pull in.
  const others = fs.readdirSync(path.join(project, 'node_modules')).filter((n) => !n.startsWith('.') && n !== pkg.name)
  if (others.length > 0) fail(`installing the package also installed ${others.join(', ')}`)
}

// Both programs: start hyperd, create a database, insert, read back, and
// check that the package resolved from the project, not the repository.
const body = (dbFile) => `
const hyper = await HyperProcess.start()
try {
  const conn = await Connection.connect({
    endpoint: hyper.endpoint,
    database: ${JSON.stringify(dbFile)},
    createMode: 'createAndReplace',
  })
  try {
    await conn.executeCommand('CREATE TABLE t (id INTEGER NOT NULL, name TEXT, big BIGINT)')
    const n = await conn.executeCommand("INSERT INTO t VALUES (1, 'one', 10000000000), (2, NULL, -3)")
    if (n !== 2) throw new Error('inserted ' + n + ' rows, expected 2')
    const rows = await conn.queryAll('SELECT id, name, big FROM t ORDER BY id')
    const got = JSON.stringify(rows, (_, v) => (typeof v === 'bigint' ? v + 'n' : v))
    const want = '[{"id":1,"name":"one","big":"10000000000n"},{"id":2,"name":null,"big":"-3n"}]'
    if (got !== want) throw new Error('read back ' + got + ', expected ' + want)
  } finally {
    await conn.close()
  }
} finally {
  await hyper.close()
}
if (!fs.existsSync(${JSON.stringify(dbFile)})) throw new Error('no database file was written')
`

const ESM = (dbFile) => `import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { HyperProcess, Connection } from '${pkg.name}'

const resolved = fileURLToPath(import.meta.resolve('${pkg.name}'))
if (!resolved.startsWith(fs.realpathSync(process.cwd()))) throw new Error('resolved ' + resolved + ' outside the project')
${body(dbFile)}
console.log('esm ok:', resolved)
`

const CJS = (dbFile) => `const fs = require('node:fs')
const { HyperProcess, Connection } = require('${pkg.name}')

const resolved = require.resolve('${pkg.name}')
if (!resolved.startsWith(fs.realpathSync(process.cwd()))) throw new Error('resolved ' + resolved + ' outside the project')
async function main() {
${body(dbFile)}
  console.log('cjs ok:', resolved)
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
`

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hyperdb-pack-test-'))
const cleanup = () => fs.rmSync(work, { recursive: true, force: true })
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanup()
    process.exit(1)
  })
}

try {
  if (!path.relative(repoRoot, work).startsWith('..')) fail(`the temporary directory ${work} is inside the repository`)
  checkBuilt()
  const hyperd = findHyperd()

  // The tarball goes into the temporary directory, so cleanup removes it too.
  const packJson = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: pkgDir })
  const [packed] = JSON.parse(packJson.slice(packJson.indexOf('[')))
  const tarball = path.join(work, packed.filename)
  checkContents(packed)
  step(`packed ${packed.filename}: ${(packed.size / 1e6).toFixed(1)} MB, ${packed.entryCount} files`)

  const project = path.join(work, 'project')
  fs.mkdirSync(project)
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'pack-test', version: '1.0.0', private: true }, null, 2),
  )
  // --offline: the package has no dependencies, so nothing may come from a registry.
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: project })
  checkInstalled(project)
  step('installed the tarball into a fresh project')

  // The bin is linked, and with hyperd already in place it installs nothing.
  const bin = path.join(project, 'node_modules', '.bin', 'hyperdb-api-install-hyperd')
  const printed = run(bin, ['--dir', path.dirname(hyperd)], { cwd: project }).trim()
  if (printed !== path.join(path.dirname(hyperd), 'hyperd')) fail(`hyperdb-api-install-hyperd printed ${printed}`)

  const env = { ...process.env, HYPERD_PATH: hyperd }
  fs.writeFileSync(path.join(project, 'esm.mjs'), ESM(path.join(work, 'esm.hyper')))
  fs.writeFileSync(path.join(project, 'cjs.cjs'), CJS(path.join(work, 'cjs.hyper')))
  process.stdout.write(run(process.execPath, ['esm.mjs'], { cwd: project, env, timeoutMs: 60_000 }))
  process.stdout.write(run(process.execPath, ['cjs.cjs'], { cwd: project, env, timeoutMs: 60_000 }))
  step('ran the ESM and CommonJS programs against hyperd')

  console.log(`pack-test: ok in ${((performance.now() - started) / 1000).toFixed(1)} s`)
} catch (e) {
  console.error(`pack-test: FAILED: ${e instanceof TestFailure ? e.message : (e?.stack ?? e)}`)
  process.exitCode = 1
} finally {
  cleanup()
}

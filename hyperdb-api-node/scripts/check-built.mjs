// Refuses to pack a package that is not built: without it `npm pack` of a
// fresh checkout gives a package of four files that fails on its first
// import. Run by npm before it packs (`prepack`), and by pack-test.
//
//   node scripts/check-built.mjs
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** What a packed package needs that the build makes and `pkgDir` lacks. */
export function missingBuildOutputs(dir = pkgDir) {
  const missing = ['dist/index.js', 'dist/index.mjs', 'dist/index.d.ts', 'native/index.d.ts'].filter(
    (f) => !fs.existsSync(path.join(dir, f)),
  )
  const native = path.join(dir, 'native')
  if (!fs.existsSync(native) || !fs.readdirSync(native).some((f) => f.endsWith('.node'))) {
    missing.push('native/*.node')
  }
  return missing
}

/** The refusal for `missing`, naming the command that builds them. */
export function notBuiltMessage(missing) {
  return `the package is not built (missing ${missing.join(', ')}): run \`npm run build\` first`
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const missing = missingBuildOutputs()
  if (missing.length > 0) {
    console.error(`hyperdb-api: ${notBuiltMessage(missing)}`)
    process.exit(1)
  }
}

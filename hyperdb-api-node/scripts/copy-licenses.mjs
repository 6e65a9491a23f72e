// The repository's license texts into the package root, where npm packs
// them (`files` in package.json): one copy in git, the repository's.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
for (const name of ['LICENSE-MIT', 'LICENSE-APACHE']) {
  fs.copyFileSync(path.join(pkgDir, '..', name), path.join(pkgDir, name))
}

/**
 * Loads the native addon built by the napi CLI (`native/`). Only
 * linux-x64 with glibc has a prebuilt addon; anywhere else the error says
 * how to build one.
 */
import * as path from 'node:path'
import type * as Native from '../native/index'

function load(): typeof Native {
  const platform = `${process.platform}-${process.arch}`
  if (platform !== 'linux-x64') {
    throw new Error(
      `hyperdb-api ships a native addon for linux-x64 (glibc) only, and this is ${platform}. ` +
        'Build it from source (Rust 1.88+ and Node 20+): clone the repository, then ' +
        '`cd hyperdb-api-node && npm ci && npm run build`.',
    )
  }
  const file = path.join(__dirname, '..', 'native', 'hyperdb-api.linux-x64-gnu.node')
  try {
    return require(file) as typeof Native
  } catch (e) {
    throw new Error(
      `hyperdb-api could not load its native addon ${file}: ${(e as Error).message}. ` +
        'If it is missing, build it: `cd hyperdb-api-node && npm ci && npm run build`.',
      { cause: e },
    )
  }
}

export const native: typeof Native = load()
export type * from '../native/index'

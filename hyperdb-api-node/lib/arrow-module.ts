/**
 * Which `apache-arrow` the package works with. The peer dependency ships
 * an ES module build and a CommonJS build, and Node loads them as two
 * separate module instances with separate classes: a `Table` made by one
 * is not `instanceof` the other's `Table`, and the other's `tableToIPC`
 * writes it as 0 bytes. So results are built with the build the caller
 * has: the CommonJS one when this package was loaded with `require`, the
 * ES module one when it was imported (`dist/index.mjs` says so through
 * `importedAsEsModule`). Inputs are accepted from either.
 */
import { HyperError } from './errors'

export type Arrow = typeof import('apache-arrow')

/** Set by `dist/index.mjs`, the ES module entry point, when it loads. */
let esModuleCaller = false
let preferred: Promise<Arrow> | undefined
let both: Promise<Arrow[]> | undefined

/** @internal Called by `dist/index.mjs`: the caller imported the package. */
export function importedAsEsModule(): void {
  esModuleCaller = true
}

function loadEsModule(): Promise<Arrow> {
  return import('apache-arrow')
}

async function loadCommonJs(): Promise<Arrow> {
  return require('apache-arrow') as Arrow
}

/**
 * The `apache-arrow` build results are made with, loaded on first use
 * (so the package works without it until Arrow is asked for).
 */
export function loadArrow(): Promise<Arrow> {
  preferred ??= (esModuleCaller ? loadEsModule() : loadCommonJs()).catch((e: unknown) => {
    preferred = undefined
    throw new HyperError({
      code: '58000',
      message: 'Arrow results and inputs need the apache-arrow package: npm install apache-arrow',
      cause: e,
    })
  })
  return preferred
}

/**
 * Every `apache-arrow` build a caller may have made input with, the
 * preferred one first (see the module docs).
 */
export function arrowModules(): Promise<Arrow[]> {
  both ??= (async () => {
    const first = await loadArrow()
    const other = await (esModuleCaller ? loadCommonJs() : loadEsModule()).catch(() => undefined)
    return other === undefined || other === first ? [first] : [first, other]
  })().catch((e: unknown) => {
    // As `loadArrow`: a later call tries again (apache-arrow installed since).
    both = undefined
    throw e
  })
  return both
}

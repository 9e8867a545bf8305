import { readFileSync } from 'node:fs'

/** The product version, from package.json (dist/runtime/version.js → ../../package.json). */
export const PRODUCT_VERSION: string = (() => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
})()

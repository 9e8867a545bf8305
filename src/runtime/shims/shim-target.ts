import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { StatePaths } from '../paths.js'

/**
 * What a shim runs: a tiny per-generation file that pins one verified
 * release entrypoint and hands over to the launcher in this package. Its
 * shebang names the daemon's own node, so connector CLIs run with the node
 * tutti runs with, whatever `node` is first on the agent's PATH.
 */
export interface ShimPin {
  key: string
  generation: number
  digest: string
  /** Absolute path of the entrypoint inside the release. */
  entrypoint: string
}

const LAUNCHER = pathToFileURL(fileURLToPath(new URL('./launcher.js', import.meta.url))).href

export function shimTargetPath(paths: StatePaths, pin: Pick<ShimPin, 'key' | 'generation'>): string {
  return path.join(paths.shimTargetsDir(pin.key), `g${pin.generation}.mjs`)
}

export function shimTargetSource(paths: StatePaths, pin: ShimPin): string {
  const config = { stateDir: paths.root, key: pin.key, generation: pin.generation, digest: pin.digest, entrypoint: pin.entrypoint }
  return [
    `#!${process.execPath}`,
    `// tutti-connector-${pin.key}, generation ${pin.generation}: written by the tutti daemon, do not edit`,
    `import { launch } from ${JSON.stringify(LAUNCHER)}`,
    `await launch(${JSON.stringify(config)})`,
    '',
  ].join('\n')
}

/** The generation a shim file's text runs (cmd-shim writes the target's relative path into it). */
export function shimGeneration(shimText: string): number | undefined {
  const m = /shims[\\/][^/\\]+[\\/]g(\d+)\.mjs/.exec(shimText)
  return m ? Number(m[1]) : undefined
}

/** The release digest a launch target pins. */
export function pinnedDigest(targetText: string): string | undefined {
  return /"digest":"([a-f0-9]{64})"/.exec(targetText)?.[1]
}

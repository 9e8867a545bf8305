import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DATA_DIR_VAR, MANIFEST_FILE, shimCommand, TOKEN_ENV } from '../names.js'
import type { StatePaths } from '../paths.js'
import type { LaunchConfig } from './launcher.cjs'

/**
 * What a shim runs: a tiny per-generation CommonJS file that pins one
 * verified release entrypoint and hands over to the launcher in this
 * package, with every path and name the launcher needs written into it (so
 * that it loads nothing else). Its shebang names the daemon's own node, so
 * connector CLIs run with the node tutti runs with, whatever `node` is first
 * on the agent's PATH; the POSIX shim names that node too (posix-shim.ts).
 */
export interface ShimPin {
  key: string
  generation: number
  digest: string
  /** Absolute path of the entrypoint inside the release. */
  entrypoint: string
}

const LAUNCHER = fileURLToPath(new URL('./launcher.cjs', import.meta.url))

/** `g<N>.cjs`; tutti before the CommonJS launcher wrote `g<N>.mjs` (pruned like any other old target). */
export const TARGET_FILE = /^g(\d+)\.[cm]js$/

export function shimTargetPath(paths: StatePaths, pin: Pick<ShimPin, 'key' | 'generation'>): string {
  return path.join(paths.shimTargetsDir(pin.key), `g${pin.generation}.cjs`)
}

export function shimTargetSource(paths: StatePaths, pin: ShimPin): string {
  const config: LaunchConfig = {
    key: pin.key,
    generation: pin.generation,
    digest: pin.digest,
    entrypoint: pin.entrypoint,
    command: shimCommand(pin.key),
    installedJson: paths.installedJson,
    credentialsJson: paths.credentialsJson,
    manifest: path.join(paths.releaseDir(pin.key, pin.digest), MANIFEST_FILE),
    dataDir: paths.dataDir(pin.key),
    dataDirVar: DATA_DIR_VAR,
    tokenVar: TOKEN_ENV,
  }
  return [
    `#!${process.execPath}`,
    `// ${shimCommand(pin.key)}, generation ${pin.generation}: written by the tutti daemon, do not edit`,
    // semicolons: generated code does not lean on automatic semicolon insertion
    "'use strict';",
    `require(${JSON.stringify(LAUNCHER)}).launch(${JSON.stringify(config)});`,
    '',
  ].join('\n')
}

/**
 * The generation a shim file's text runs: the last launch target path in it
 * (ours and cmd-shim's scripts name the target last, after node; the state
 * dir's own path may hold anything before it).
 */
export function shimGeneration(shimText: string): number | undefined {
  const all = [...shimText.matchAll(/shims[\\/][a-z][a-z0-9-]*[\\/]g(\d+)\.[cm]js["']/g)]
  const last = all.at(-1)
  return last ? Number(last[1]) : undefined
}

/** The release digest a launch target pins. */
export function pinnedDigest(targetText: string): string | undefined {
  return /"digest":"([a-f0-9]{64})"/.exec(targetText)?.[1]
}

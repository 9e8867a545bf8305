import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic-write.js'
import type { StatePaths } from '../paths.js'
import { shellQuote } from './posix-shim.js'

/** The `tutti` binary of the installation this daemon runs from. */
export const TUTTI_BIN = fileURLToPath(new URL('../../../bin/run.cjs', import.meta.url))

/**
 * `tutti` in the state bin dir, beside the connector shims: the runtime
 * prompt tells agents to run `tutti connector available`, and the prepared
 * PATH alone must be enough for that. It pins this installation's node and
 * CLI by absolute path, and this state directory.
 */
export function tuttiCommandSource(paths: StatePaths): { posix: string; cmd: string } {
  const posix = [
    '#!/bin/sh',
    '# tutti, for agent sessions: written by the tutti daemon, do not edit',
    `TUTTI_STATE_DIR=${shellQuote(paths.root)}`,
    'export TUTTI_STATE_DIR',
    `exec ${shellQuote(process.execPath)} ${shellQuote(TUTTI_BIN)} "$@"`,
    '',
  ].join('\n')
  const cmd = ['@ECHO off', `SET "TUTTI_STATE_DIR=${paths.root}"`, `"${process.execPath}" "${TUTTI_BIN}" %*`, ''].join(
    '\r\n',
  )
  return { posix, cmd }
}

/** Write (or refresh) `bin/tutti`; a no-op when it is already this installation's. */
export async function publishTuttiCommand(paths: StatePaths): Promise<boolean> {
  const file = path.join(paths.binDir, 'tutti')
  const { posix, cmd } = tuttiCommandSource(paths)
  // absent or unreadable: written below
  if ((await fs.readFile(file, 'utf8').catch(() => '')) === posix) return false
  await ensurePrivateDir(paths.binDir)
  await writeFileAtomic(file, posix, 0o700)
  await writeFileAtomic(`${file}.cmd`, cmd, 0o600)
  return true
}

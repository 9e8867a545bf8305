import fs from 'node:fs/promises'
import path from 'node:path'
import type { ClaudeProjection } from '../sessions/prepared-runtime.js'
import { findCommand } from './agent-command.js'

/** The command Claude Code is started by, as a command string names it. */
export const CLAUDE_COMMAND = 'claude'

const quoted = (word: string): string => `'${word.split("'").join(`'\\''`)}'`

/**
 * For a command string (`sh -c "claude -p …"`), where no argv word is the
 * agent: a `claude` first on the agent's PATH that runs the real one with the
 * projection's flags in front of its own. The real one is found now, on the
 * agent's PATH or in `node_modules/.bin`, so the entry never finds itself.
 * Resolves with the directory to put first on PATH, or undefined when there
 * is no `claude` to run.
 */
export async function claudeOnPath(
  projection: ClaudeProjection,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<string | undefined> {
  const real = findCommand(CLAUDE_COMMAND, env, cwd)
  if (!real) return undefined
  const bin = path.join(path.dirname(projection.mcpConfigPath), 'bin')
  await fs.mkdir(bin, { recursive: true, mode: 0o700 })
  const script = `#!/bin/sh\nexec ${[real, ...projection.args].map(quoted).join(' ')} "$@"\n`
  await fs.writeFile(path.join(bin, CLAUDE_COMMAND), script, { mode: 0o700 })
  return bin
}

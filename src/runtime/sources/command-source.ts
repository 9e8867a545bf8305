import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import { sourceIdentity } from '../store/source-identity.js'
import type { GeneratedSource, SourceOptions } from './generated-source.js'
import { deriveKey } from './source-key.js'

/**
 * `install --key K -- <command> [args…]`: a stdio server given as the
 * command that runs it, as `claude mcp add` takes it. The release holds only
 * the generated manifest; the command is resolved against the installing
 * shell's PATH and recorded, like any bare command.
 */

/** Runners whose first operand is the package they run: `npx -y @scope/server-slack` is "slack". */
const PACKAGE_RUNNERS: Record<string, string[]> = {
  npx: [],
  bunx: [],
  uvx: [],
  pnpx: [],
  pnpm: ['dlx'],
  yarn: ['dlx'],
  bun: ['x'],
}
/** Interpreters whose first operand is the server's script. */
const INTERPRETERS = new Set(['node', 'deno', 'bun', 'python', 'python3', 'uv', 'tsx'])

const invalid = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)
export const HEADER_NOT_STDIO = '--header is for a remote server (a URL source); a stdio server takes --env NAME=VALUE'

/** The package a runner runs (without its version), if the command line is one. */
function runPackage(words: readonly string[]): string | undefined {
  const sub = PACKAGE_RUNNERS[words[0]!]
  if (!sub) return undefined
  let rest = words.slice(1)
  if (sub.length) {
    if (rest[0] !== sub[0]) return undefined
    rest = rest.slice(1)
  }
  // `--package X`/`-p X` name it too; other options are skipped
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!
    if (w === '--package' || w === '-p') return rest[i + 1]
    if (w.startsWith('--package=')) return w.slice('--package='.length)
    if (!w.startsWith('-')) return w.replace(/(.)@[^/]*$/, '$1').replace(/==.*$/, '')
  }
  return undefined
}

/**
 * A server runs in its release directory, not in the installing shell's:
 * an explicitly relative path (`./x`, `../x`), or an interpreter's script
 * that exists here, is made absolute.
 */
async function absoluteArgs(words: readonly string[]): Promise<string[]> {
  const out: string[] = []
  let scriptSeen = !INTERPRETERS.has(words[0]!)
  for (const w of words.slice(1)) {
    const relative = w.startsWith('./') || w.startsWith('../')
    const script = !scriptSeen && !w.startsWith('-')
    if (script) scriptSeen = true
    const exists =
      (relative || script) &&
      !path.isAbsolute(w) &&
      (await fs.stat(w).then(
        () => true,
        () => false,
      ))
    out.push(exists ? path.resolve(w) : w)
  }
  return out
}

export async function commandSource(options: SourceOptions): Promise<GeneratedSource> {
  const words = options.command ?? []
  const command = words[0]
  if (!command) throw invalid('no source and no command: give a package, a URL, or the server\'s command after "--"')
  if (command.includes('/') || command.includes('\\')) {
    const how = `or run a script through its interpreter (-- node ${command})`
    throw invalid(`-- ${command}: give the command by name (it is looked up on PATH and recorded), ${how}`)
  }
  const runs = runPackage(words)
  if (options.key === undefined && !runs) {
    throw invalid(`-- ${command}: name the connector with --key NAME (a command line has no package name to give one)`)
  }
  if (options.headers?.length) throw invalid(HEADER_NOT_STDIO)
  const key = deriveKey(runs ?? '', options.key)
  const args = await absoluteArgs(words)
  const line = [command, ...args].join(' ')
  const manifest: Record<string, unknown> = {
    schemaVersion: 1,
    key,
    name: (runs ?? key).slice(0, 80),
    version: '0.0.0',
    description: `the stdio MCP server run as: ${line}`.slice(0, 1024),
    mcp: { transport: 'stdio', command, args },
  }
  const root = await fs.mkdtemp(path.join(await options.scratchDir(), 'command-'))
  return { root, manifest, kind: 'command', source: sourceIdentity('command', line), skipped: [] }
}

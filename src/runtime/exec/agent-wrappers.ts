import path from 'node:path'

/**
 * Where the agent is in a command line that starts it through a wrapper
 * (`env X=1 claude`, `npx claude`, `node cli.js`): the first word that is not
 * the wrapper's own option. Provider flags go right after that word. A
 * command string (`sh -c "…"`, `node -e`, `npx -c`) or a wrapper form not
 * known here has no such word: the agent is then reached through a PATH
 * entry instead (see session-exec.ts).
 */
export type AgentPlace =
  /** `args[index]` is the agent's word: flags go right after it. */
  | { kind: 'word'; index: number; via?: string }
  /** No word in argv is the agent: project through the environment. */
  | { kind: 'command-string'; wrapper: string }

interface WrapperSpec {
  /** Options followed by a value as the next word. */
  readonly valued: readonly string[]
  /** Options whose value is a command string, not a word. */
  readonly commandString: readonly string[]
  /** `NAME=VALUE` words before the command (env). */
  readonly assignments?: boolean
  /** Subcommands that run a command (`pnpm dlx`); any other subcommand is not a wrapper form known here. */
  readonly subcommands?: readonly string[]
}

const NPX: WrapperSpec = { valued: ['-p', '--package'], commandString: ['-c', '--call'] }
const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: { valued: ['-u', '--unset', '-C', '--chdir'], commandString: ['-S', '--split-string'], assignments: true },
  node: {
    valued: ['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions'],
    commandString: ['-e', '--eval', '-p', '--print'],
  },
  npx: NPX,
  bunx: { valued: ['-p', '--package'], commandString: [] },
  npm: { ...NPX, subcommands: ['exec', 'x'] },
  pnpm: { valued: ['--package', '--allow-build'], commandString: ['-c', '--shell-mode'], subcommands: ['dlx', 'exec'] },
  yarn: { valued: ['-p', '--package'], commandString: [], subcommands: ['dlx', 'exec'] },
  nohup: { valued: [], commandString: [] },
  nice: { valued: ['-n', '--adjustment'], commandString: [] },
}
/** Shells run a script or a command string: never a word to put flags after. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'fish'])

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/

/** The wrapper's name as recognised: the basename, so `/usr/bin/env` is `env`. */
export const wrapperName = (word: string): string => path.basename(word)

/** Wrappers that look their command up on PATH themselves, as a shell would (npx and the like look in node_modules). */
export const PATH_LOOKUP_WRAPPERS: ReadonlySet<string> = new Set(['env', 'nohup', 'nice'])

/** Where the agent is in `[argv0, ...args]`: args[index], or nowhere (a command string). */
export function placeAgent(argv0: string, args: readonly string[]): AgentPlace {
  return place(argv0, args, 0, undefined)
}

function place(word: string, args: readonly string[], from: number, via: string | undefined): AgentPlace {
  const name = wrapperName(word)
  if (SHELLS.has(name)) return { kind: 'command-string', wrapper: name }
  const spec = WRAPPERS[name]
  if (!spec) return via === undefined ? { kind: 'word', index: from - 1 } : { kind: 'word', index: from - 1, via }
  let i = from
  if (spec.subcommands) {
    if (!spec.subcommands.includes(args[i] ?? '')) return { kind: 'command-string', wrapper: name }
    i++
  }
  for (; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--') {
      i++
      break
    }
    const option = arg.split('=')[0]!
    if (spec.commandString.includes(option)) return { kind: 'command-string', wrapper: name }
    if (spec.assignments && ASSIGNMENT.test(arg)) continue
    if (!arg.startsWith('-') || arg === '-') {
      if (arg === '-' && spec.assignments) continue
      break
    }
    if (spec.valued.includes(arg)) i++
  }
  const inner = args[i]
  if (inner === undefined) return { kind: 'command-string', wrapper: name }
  // a wrapper behind a wrapper (`env X=1 npx claude`): its own rule places the agent
  return place(inner, args, i + 1, name)
}

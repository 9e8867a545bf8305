import { Flags } from '@oclif/core'
import fs from 'node:fs/promises'
import { TuttiCommand } from '../../cli/base-command.js'
import { viewFlags, viewOptions } from '../../cli/view-flags.js'
import { prepareRuntime } from '../../runtime/client/sessions.js'
import { PROVIDERS, type Provider } from '../../runtime/control-protocol/session-prepare.js'
import { SESSION_TTL_ENV } from '../../runtime/names.js'
import { requestedTtl } from '../../runtime/sessions/session-ttl.js'
import type { PreparedRuntime } from '../../runtime/sessions/prepared-runtime.js'

const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`

/** `export NAME='value'` lines for `eval`: what a person's shell needs to start the agent by hand. */
function shellExports(runtime: PreparedRuntime): string {
  const vars: Record<string, string> = { ...runtime.env }
  if (runtime.projection.kind === 'claude') {
    vars.TUTTI_MCP_CONFIG = runtime.projection.mcpConfigPath
    vars.TUTTI_ADD_DIR = runtime.projection.addDir
  }
  return Object.entries(vars)
    .map(([name, value]) => `export ${name}=${quote(value)}\n`)
    .join('')
}

export default class SessionPrepare extends TuttiCommand {
  static override hidden = true
  static override summary =
    'Prepare the runtime of one agent session: env, the connector MCP server, Skill roots and the provider projection'
  static override flags = {
    provider: Flags.string({ description: 'agent provider', options: [...PROVIDERS], required: true }),
    workspace: Flags.string({ description: 'workspace id the session belongs to', required: true }),
    session: Flags.string({ description: 'agent session id', required: true }),
    'agent-initialize': Flags.string({
      description: "ACP: a file with the agent's initialize response, or - for stdin",
    }),
    ttl: Flags.string({
      description: `how long the token lives, e.g. 90m, 12h, 7d (default: ${SESSION_TTL_ENV}, else 7d)`,
    }),
    shell: Flags.boolean({
      description:
        'print POSIX `export` lines to eval: the session env, plus TUTTI_MCP_CONFIG and TUTTI_ADD_DIR for claude',
      default: false,
      exclusive: ['json'],
    }),
    ...viewFlags,
  }
  static override examples = [
    '<%= config.bin %> session prepare --provider codex --workspace ~/src/app --session 7f3c --json',
    '<%= config.bin %> session prepare --provider acp --workspace w --session s --agent-initialize init.json --json',
    'eval "$(<%= config.bin %> session prepare --provider claude --workspace "$PWD" --session task-1 --shell)"',
    '<%= config.bin %> session prepare --provider claude --workspace "$PWD" --session t2 --connectors github,linear ' +
      '--json',
    '<%= config.bin %> session prepare --provider codex --workspace w --session ci-42 --ttl 90m --json',
  ]

  async run() {
    const { flags } = await this.parse(SessionPrepare)
    const ttlSeconds = requestedTtl(flags.ttl, process.env, false)
    const runtime = await prepareRuntime({
      ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
      provider: flags.provider as Provider,
      workspace: flags.workspace,
      session: flags.session,
      stateDir: this.paths.root,
      agentInitialize: flags.provider === 'acp' ? await readAgentInitialize(flags['agent-initialize']) : undefined,
      ...viewOptions(flags),
    })
    for (const line of runtime.warnings) process.stderr.write(`${line}\n`)
    if (flags.shell) process.stdout.write(shellExports(runtime))
    else if (!this.jsonEnabled())
      this.log(
        `prepared ${runtime.provider} session ${runtime.session}; ` +
          `use --json or --shell for the runtime (it contains the session token)`,
      )
    return runtime
  }
}

/** A missing or unreadable response is not an error: it means "no connector context". */
async function readAgentInitialize(source: string | undefined): Promise<unknown> {
  if (!source) return undefined
  try {
    const text = source === '-' ? await readStdin() : await fs.readFile(source, 'utf8')
    return JSON.parse(text)
  } catch {
    // unreadable or not JSON: no connector context, as the doc comment says
    return undefined
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

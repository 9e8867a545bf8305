import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parse, stringify } from 'smol-toml'
import { ErrorCodes, TuttiError } from '../../errors.js'
import { ensurePrivateDir, writeFileAtomic } from '../../fs/atomic-write.js'
import { linkSkills, type SkillRootWithSkills } from '../session-dir.js'
import { TOKEN_ENV, type CodexProjection, type MCPServerBinding } from '../prepared-runtime.js'

/** The user's own Codex home: $CODEX_HOME, else ~/.codex. */
export function userCodexHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.CODEX_HOME ? path.resolve(env.CODEX_HOME) : path.join(env.HOME ?? os.homedir(), '.codex')
}

/** Files of the user's Codex home that a session needs as they are (login), linked, never copied. */
const LINKED_FILES = ['auth.json']

/**
 * Codex (and tutti-agent): a session-isolated CODEX_HOME whose config.toml
 * is the user's own with `[mcp_servers.connector]` set to our server. A user
 * server named "connector" is replaced whole (sub-tables included); other
 * user servers are kept. The token stays in the environment
 * (`bearer_token_env_var`), never in the file. Skills go to
 * `$CODEX_HOME/skills`, where Codex's own scanner looks.
 */
export async function projectCodex(
  dir: string,
  servers: readonly MCPServerBinding[],
  skillRoots: readonly SkillRootWithSkills[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CodexProjection> {
  const home = path.join(dir, 'codex')
  await ensurePrivateDir(home)
  const userHome = userCodexHome(env)
  const userConfigPath = path.join(userHome, 'config.toml')
  let config: Record<string, unknown> = {}
  // no user config.toml: the projection starts from an empty config
  const text = await fs.readFile(userConfigPath, 'utf8').catch(() => undefined)
  if (text !== undefined) {
    try {
      config = parse(text) as Record<string, unknown>
    } catch (err) {
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `${userConfigPath} is not valid TOML, ` +
          `so it cannot be carried into the session: ${(err as Error).message.split('\n')[0]}`,
      )
    }
  }
  const mcp = (config.mcp_servers && typeof config.mcp_servers === 'object' ? config.mcp_servers : {}) as Record<
    string,
    unknown
  >
  for (const s of servers) {
    mcp[s.name] = { url: s.url, bearer_token_env_var: TOKEN_ENV }
  }
  config.mcp_servers = mcp
  config.shell_environment_policy = withoutToken(config.shell_environment_policy)
  await writeFileAtomic(
    path.join(home, 'config.toml'),
    `# written by tutti for one agent session: your ${userConfigPath} plus [mcp_servers.connector], ` +
      `the token kept out of shell_environment_policy\n` +
      `${stringify(config)}\n`,
  )
  for (const name of LINKED_FILES) {
    const from = path.join(userHome, name)
    const to = path.join(home, name)
    await fs.rm(to, { force: true })
    if (
      await fs.stat(from).then(
        () => true,
        () => false,
      )
    )
      await fs.symlink(from, to)
  }
  await linkSkills(path.join(home, 'skills'), skillRoots)
  return { kind: 'codex', codexHome: home, env: { CODEX_HOME: home } }
}

/**
 * The token is for Codex's MCP client, which reads it from Codex's own
 * environment. Kept out of the shell environment Codex builds for the
 * model's commands, which Codex also writes to $CODEX_HOME/shell_snapshots/.
 */
function withoutToken(policy: unknown): Record<string, unknown> {
  const out = (policy && typeof policy === 'object' ? { ...policy } : {}) as Record<string, unknown>
  const exclude = Array.isArray(out.exclude) ? out.exclude : []
  out.exclude = exclude.includes(TOKEN_ENV) ? exclude : [...exclude, TOKEN_ENV]
  return out
}

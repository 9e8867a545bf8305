import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runProgram } from '../support/package-install.js'
import { CLAUDE_OFFLINE, claudeBinary } from '../support/agents.js'
import { TOKEN_SHAPE } from '../support/bridge-clients.js'
import { filesUnder } from '../support/agent-probe.js'
import { fullConnector } from '../support/fixture-connector.js'
import { BIN, cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

/**
 * `session exec` as people start agents: from a clone, where `claude` is only
 * in `node_modules/.bin`, and behind a wrapper (`env X=1 claude`, `npx`,
 * `node`, `sh -c "…"`). The real Claude Code from npm runs a `-p` session,
 * whose first stream-json line lists its MCP tools and Skills (no model is
 * asked before that), and `CLAUDE_REPORT` shows what else reached it.
 */
const SESSION = ['-p', 'hello', '--output-format', 'stream-json', '--verbose', '--strict-mcp-config']

describe('session exec with wrappers and from a clone', () => {
  let dir: string
  let clone: string
  let home: string
  let env: NodeJS.ProcessEnv
  const outputs: string[] = []
  beforeAll(async () => {
    dir = tempStateDir('exec-wrappers')
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-wrappers-home-'))
    // a clone: claude is a dependency, so it is in node_modules/.bin and nowhere on PATH
    clone = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-clone-'))
    fs.writeFileSync(path.join(clone, 'package.json'), JSON.stringify({ name: 'a-clone', private: true }))
    fs.mkdirSync(path.join(clone, 'node_modules', '.bin'), { recursive: true })
    fs.symlinkSync(claudeBinary(), path.join(clone, 'node_modules', '.bin', 'claude'))
    fs.mkdirSync(path.join(clone, 'src', 'deep'), { recursive: true })
    const PATH = `${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`
    env = { PATH, HOME: home, TUTTI_STATE_DIR: dir, ...CLAUDE_OFFLINE }
    await tuttiJson(dir, ['connector', 'install', fullConnector('kit')])
  })
  afterAll(async () => {
    try {
      const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      const everything = [log, ...outputs, ...Object.values(filesUnder(dir))].join('\n')
      expect(everything).not.toMatch(TOKEN_SHAPE)
    } finally {
      await cleanupState(dir)
      for (const d of [home, clone]) fs.rmSync(d, { recursive: true, force: true })
    }
  })

  const exec = async (agent: string[], cwd = path.join(clone, 'src', 'deep')) => {
    const args = [BIN, 'session', 'exec', '--provider', 'claude', '--', ...agent]
    const res = await runProgram(process.execPath, args, { env, cwd, timeout: 90_000 })
    outputs.push(res.stdout, res.stderr)
    return res
  }
  /** Claude Code's init line: the tools and Skills its session has. */
  const init = (stdout: string) =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((m) => m.type === 'system' && m.subtype === 'init')
  const expectConnectors = (res: { stdout: string; stderr: string }) => {
    const seen = init(res.stdout)
    expect(seen, res.stdout + res.stderr).toBeDefined()
    const connected = expect.objectContaining({ name: 'connector', status: 'connected' })
    expect(seen.mcp_servers).toEqual(expect.arrayContaining([connected]))
    expect(seen.tools).toEqual(expect.arrayContaining(['mcp__connector__kit_read_graph']))
    expect(JSON.stringify(seen.skills)).toMatch(/kit-workflow/)
  }

  it('`-- claude` in a clone: found in node_modules/.bin, walking up from the working directory', async () => {
    expectConnectors(await exec(['claude', ...SESSION]))
  })

  it('`-- env X=1 claude`: the flags go next to claude, the variable reaches it', async () => {
    const res = await exec(['env', 'ANTHROPIC_MODEL=model-from-env', 'claude', ...SESSION])
    expectConnectors(res)
    expect(init(res.stdout).model).toBe('model-from-env')
  })

  it('`-- npx --no-install claude` and `-- node <script>`: the flags follow the command or script', async () => {
    expectConnectors(await exec(['npx', '--no-install', 'claude', ...SESSION]))
    // a node script that starts claude with its own argv, as an agent's JS launcher does
    const script = path.join(clone, 'launch.cjs')
    const claude = JSON.stringify(claudeBinary())
    const launch = `require('child_process').spawnSync(${claude}, process.argv.slice(2), { stdio: 'inherit' })`
    fs.writeFileSync(script, launch)
    expectConnectors(await exec(['node', script, ...SESSION]))
  })

  it('`-- sh -c "claude …"`: a command string gets the connectors through a `claude` first on PATH', async () => {
    expectConnectors(await exec(['sh', '-c', `claude ${SESSION.join(' ')}`]))
    // the user's own words come after the projection's, as they do with `-- claude`
    const res = await exec(['sh', '-c', 'exec claude "$@"', 'sh', ...SESSION])
    expectConnectors(res)
  })
})

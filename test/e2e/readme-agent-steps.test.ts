import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runProgram } from '../support/package-install.js'
import { CLAUDE_OFFLINE, claudeBinary, codexBinary } from '../support/agents.js'
import { modernClient } from '../support/mcp-clients.js'
import { BIN, cleanupState, EXAMPLES, REPO, tempStateDir, tuttiJson } from '../support/tutti.js'

/**
 * The README's steps for Claude Code and Codex, run as written. `claude` and
 * `codex` on the PATH are thin wrappers that record what they were started
 * with and run the real binaries from npm non-interactively: Claude Code
 * prints its session's tools and Skills (`-p … --output-format stream-json`,
 * no model needed to get that far), Codex lists its MCP servers.
 */
function readmeBlock(name: string): string {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8')
  const m = new RegExp(`<!-- readme-test: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme)
  if (!m) throw new Error(`README.md has no block marked readme-test: ${name}`)
  return m[1]!
}

const sh = (script: string, env: NodeJS.ProcessEnv, cwd: string) =>
  runProgram('/bin/sh', ['-c', script], { env, cwd, timeout: 90_000 })

describe("the README's Claude Code and Codex steps", () => {
  let dir: string
  let home: string
  let workspace: string
  let bin: string
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    dir = tempStateDir('readme')
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-readme-home-'))
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-readme-ws-'))
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-readme-bin-'))
    await tuttiJson(dir, ['connector', 'install', path.join(EXAMPLES, 'notes')])
    const write = (name: string, body: string) =>
      fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 })
    write('tutti', `exec '${process.execPath}' '${BIN}' "$@"`)
    // what the agent was started with goes to files beside the wrappers, for the test to read
    write(
      'claude',
      `printf '%s\\n' "$@" > '${bin}/claude.args'\n` +
        `printf '%s' "$TUTTI_CONNECTOR_TOKEN" > '${bin}/claude.token'\n` +
        `exec '${claudeBinary()}' -p hello --output-format stream-json --verbose --strict-mcp-config "$@"`,
    )
    write(
      'codex',
      `printf '%s' "$TUTTI_CONNECTOR_TOKEN" > '${bin}/codex.token'\nexec '${codexBinary()}' mcp list --json`,
    )
    env = {
      PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`,
      HOME: home,
      TUTTI_STATE_DIR: dir,
      ...CLAUDE_OFFLINE,
    }
  })
  afterAll(async () => {
    await cleanupState(dir)
    for (const d of [home, workspace, bin]) fs.rmSync(d, { recursive: true, force: true })
  })

  const claudeInit = (stdout: string) =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((m) => m.type === 'system' && m.subtype === 'init')

  it(
    'Claude Code: the documented lines give it the connector tools and Skills, the token only in its environment; ' +
      'after `tutti daemon stop`, running them again is all it takes',
    async () => {
      const res = await sh(readmeBlock('claude'), env, workspace)
      const init = claudeInit(res.stdout)
      expect(init, res.stdout + res.stderr).toBeDefined()
      expect(init.mcp_servers).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'connector', status: 'connected' })]),
      )
      expect(init.tools).toEqual(expect.arrayContaining(['mcp__connector__notes_read_graph']))
      expect(JSON.stringify(init.skills)).toMatch(/notes-workflow/)
      const token = fs.readFileSync(path.join(bin, 'claude.token'), 'utf8')
      expect(token).toMatch(/^tutti_/)
      expect(fs.readFileSync(path.join(bin, 'claude.args'), 'utf8')).not.toContain(token)

      await tuttiJson(dir, ['daemon', 'stop'])
      const again = await sh(readmeBlock('claude'), env, workspace)
      expect(claudeInit(again.stdout)?.tools, again.stdout + again.stderr).toEqual(
        expect.arrayContaining(['mcp__connector__notes_read_graph']),
      )
      expect(fs.readFileSync(path.join(bin, 'claude.token'), 'utf8')).not.toBe(token)
    },
  )

  it(
    '`tutti session exec --provider claude -- claude` as written works in a clone, where claude is only in ' +
      'node_modules/.bin',
    async () => {
      const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-readme-clone-'))
      try {
        // the clone's claude (a dependency) runs the real one non-interactively; nothing named claude is on PATH
        const local = path.join(clone, 'node_modules', '.bin')
        fs.mkdirSync(local, { recursive: true })
        fs.writeFileSync(
          path.join(local, 'claude'),
          `#!/bin/sh\n` +
            `exec '${claudeBinary()}' -p hello --output-format stream-json --verbose --strict-mcp-config "$@"\n`,
          { mode: 0o755 },
        )
        const onPath = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-readme-installed-'))
        fs.writeFileSync(path.join(onPath, 'tutti'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, {
          mode: 0o755,
        })
        const installed = {
          ...env,
          PATH: `${onPath}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`,
        }
        fs.mkdirSync(path.join(clone, 'src'))
        const res = await sh(readmeBlock('exec-claude'), installed, path.join(clone, 'src'))
        fs.rmSync(onPath, { recursive: true, force: true })
        const init = claudeInit(res.stdout)
        expect(init, res.stdout + res.stderr).toBeDefined()
        expect(init.tools).toEqual(expect.arrayContaining(['mcp__connector__notes_read_graph']))
        expect(JSON.stringify(init.skills)).toMatch(/notes-workflow/)
      } finally {
        fs.rmSync(clone, { recursive: true, force: true })
      }
    },
  )

  it(
    'Codex: the documented lines give it a CODEX_HOME with the connector server, ' +
      'authenticated by the exported token',
    async () => {
      const res = await sh(readmeBlock('codex'), env, workspace)
      expect(res.code, res.stderr).toBe(0)
      const servers = JSON.parse(res.stdout)
      const connector = servers.find((s: { name: string }) => s.name === 'connector')
      expect(connector.transport).toMatchObject({
        type: 'streamable_http',
        bearer_token_env_var: 'TUTTI_CONNECTOR_TOKEN',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/connector$/),
      })
      const client = await modernClient({
        url: connector.transport.url,
        headers: { Authorization: `Bearer ${fs.readFileSync(path.join(bin, 'codex.token'), 'utf8')}` },
      })
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('notes_read_graph')
      await client.close()
    },
  )
})

import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  codexMcpReload,
  prepareRuntime,
  watchConnectors,
  type CodexProjection,
  type ConnectorWatch,
  type PreparedRuntime,
} from 'tutti'
import { codexBinary, CodexAppServer } from '../support/agents.js'
import { eventually, until } from '../support/eventually.js'
import {
  functionsOf,
  inputText,
  namespaceFunctions,
  startFakeOpenAI,
  type FakeOpenAI,
} from '../support/fake-model-api/openai.js'
import type { RecordedRequest } from '../support/fake-model-api/server.js'
import { installed, uninstalled } from '../support/in-process.js'
import {
  cliHas,
  filesContaining,
  MEMORY_TOOLS,
  seenConnector,
  skillDescription,
  treeArgv,
} from '../support/model-sees.js'
import { BIN, cleanupState, tempStateDir } from '../support/tutti.js'

/**
 * What the model is given when Codex (@openai/codex from npm) runs with
 * tutti: the real binary with a `model_providers` entry pointing at a fake
 * Responses API on loopback that records every request. Codex puts an MCP
 * server's tools into one `namespace` tool, `mcp__<server>`, and lists
 * Skills in a developer message. Ways of starting it: the prepared
 * CODEX_HOME, `tutti session exec`, a static `tutti session bridge` config.
 */

const TOKEN_SHAPE = /tutti_[A-Za-z0-9_-]{43}/
const NAMESPACE = 'mcp__connector'
const connectorFunctions = (req: RecordedRequest, key: string) =>
  namespaceFunctions(req, NAMESPACE).filter((n) => n.startsWith(`${key}_`))
const memoryFunctions = (key: string) => MEMORY_TOOLS.map((t) => `${key}_${t}`)
const FAKE_KEY = { TUTTI_FAKE_OPENAI_KEY: 'sk-fake-model-sees' }

/** A user's own Codex home (`<home>/.codex`): the fake as the model provider, its key from the environment. */
function userCodexHome(home: string, fake: FakeOpenAI): string {
  const codexHome = path.join(home, '.codex')
  fs.mkdirSync(codexHome, { recursive: true })
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "gpt-fake-model-sees"',
      'model_provider = "fake"',
      '',
      '[model_providers.fake]',
      'name = "fake Responses API on loopback"',
      `base_url = "${fake.origin}/v1"`,
      'wire_api = "responses"',
      'env_key = "TUTTI_FAKE_OPENAI_KEY"',
      '',
    ].join('\n'),
  )
  return codexHome
}

/** Live processes whose environment holds `entry` (the agent and whatever it started). */
function pidsWithEnv(entry: string): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(entry)) out.push(Number(name))
    } catch {
      // gone, or not ours to read
    }
  }
  return out
}

const run = (file: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { ...options, maxBuffer: 16 * 1024 * 1024, timeout: 90_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })

describe('what the model sees from Codex', () => {
  let dir: string
  let workspace: string
  let fake: FakeOpenAI
  const homes: string[] = []
  beforeAll(async () => {
    dir = tempStateDir('model-sees-codex')
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-codex-ws-'))
    fake = await startFakeOpenAI()
    await installed(dir, seenConnector('alpha'))
  })
  afterAll(async () => {
    await fake?.close()
    await cleanupState(dir)
    for (const d of [workspace, ...homes]) if (d) fs.rmSync(d, { recursive: true, force: true })
  })
  const newHome = (): string => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-codex-home-'))
    homes.push(home)
    return home
  }

  /**
   * One non-interactive `codex exec` run (started as `command args`): its
   * first model request is checked for the alpha tools, with the server's
   * schema, and the alpha Skill.
   */
  async function firstRequestOfExec(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
    const child = spawn(
      command,
      [...args, 'exec', '--skip-git-repo-check', '--disable', 'plugins', '-C', workspace, 'What can you do here?'],
      { env, cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const stderr: string[] = []
    child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()))
    const first = await fake.next()
    try {
      expect(
        connectorFunctions(first.request, 'alpha').sort(),
        `codex stderr: ${stderr.join('').slice(-3000)}`,
      ).toEqual(memoryFunctions('alpha'))
      const search = functionsOf(first.request)
        .get(NAMESPACE)!
        .find((t) => t.name === 'alpha_search_nodes')!
      expect(search.description).toMatch(/search/i)
      expect(search.parameters).toMatchObject({ type: 'object', properties: { query: { type: 'string' } } })
      expect(inputText(first.request)).toContain(`- alpha-workflow: ${skillDescription('alpha')}`)
      for (const argv of treeArgv(child.pid!)) expect(argv).not.toMatch(TOKEN_SHAPE)
    } finally {
      first.reply({ text: 'I can use the alpha graph.' })
    }
    expect(await exited, stderr.join('').slice(-2000)).toBe(0)
  }

  /** A new thread whose `connector` server has started (Codex reports it with mcpServer/startupStatus/updated). */
  async function startedThread(codex: CodexAppServer): Promise<string> {
    const threadId = (await codex.request('thread/start', { cwd: workspace })).thread.id as string
    await reconnected(codex, threadId, 0)
    return threadId
  }

  /** How often Codex has reported the thread's connector server ready (at start, and after each reconnect). */
  const readyReports = (codex: CodexAppServer, threadId: string): number =>
    codex.notifications.filter(
      (n) =>
        n.method === 'mcpServer/startupStatus/updated' &&
        n.params?.threadId === threadId &&
        n.params?.name === 'connector' &&
        n.params?.status === 'ready',
    ).length

  /**
   * After the adapter's reload: Codex reconnects the server in the background and a turn started before
   * it reports the server ready again goes without its tools (a stdio bridge takes a moment to start).
   */
  const reconnected = async (codex: CodexAppServer, threadId: string, before: number): Promise<void> => {
    expect(await until(() => readyReports(codex, threadId) > before), codex.stderr.join('').slice(-2000)).toBe(true)
  }

  /** Turns on one app-server thread: each turn's model request, answered with text, after turn/completed. */
  function threadTurns(codex: () => CodexAppServer, threadId: () => string) {
    return async (text: string): Promise<RecordedRequest> => {
      const completed = () =>
        codex().notifications.filter((n) => n.method === 'turn/completed' && n.params?.threadId === threadId()).length
      const done = completed()
      await codex().request('turn/start', { threadId: threadId(), input: [{ type: 'text', text, text_elements: [] }] })
      const exchange = await fake.next()
      exchange.reply({ text: `answered ${text}` })
      await eventually(completed, (n) => n > done)
      return exchange.request
    }
  }

  describe('started with the prepared CODEX_HOME (HTTP)', () => {
    let runtime: PreparedRuntime
    let env: NodeJS.ProcessEnv
    beforeAll(async () => {
      const home = newHome()
      userCodexHome(home, fake)
      runtime = await prepareRuntime({
        provider: 'codex',
        workspace,
        session: 'codex-model',
        stateDir: dir,
        env: { ...process.env, HOME: home, CODEX_HOME: '' },
      })
      env = {
        PATH: runtime.env.PATH,
        HOME: home,
        CODEX_HOME: runtime.env.CODEX_HOME,
        TUTTI_CONNECTOR_TOKEN: runtime.env.TUTTI_CONNECTOR_TOKEN,
        ...FAKE_KEY,
        RUST_LOG: 'warn',
      }
    })

    it(
      'at start (codex exec): the first model request has every alpha tool in the mcp__connector namespace with ' +
        "the server's schema, and the alpha Skill",
      async () => {
        expect((runtime.projection as CodexProjection).codexHome).toBe(runtime.env.CODEX_HOME)
        await firstRequestOfExec(codexBinary(), [], env)
      },
    )

    describe('a running codex app-server thread', () => {
      let codex: CodexAppServer
      let threadId: string
      let watch: ConnectorWatch | undefined
      let reloads = 0
      const reloadErrors: unknown[] = []
      const turn = threadTurns(
        () => codex,
        () => threadId,
      )
      beforeAll(async () => {
        codex = await CodexAppServer.start(env, workspace)
        threadId = await startedThread(codex)
      })
      afterAll(async () => {
        await watch?.close()
        await codex?.stop()
      })

      it('the first turn carries the alpha tools', async () => {
        expect(connectorFunctions(await turn('one'), 'alpha').sort()).toEqual(memoryFunctions('alpha'))
      })

      it(
        'without the helper, a connector installed before the next turn is not in it: ' +
          'Codex does not refresh by itself',
        async () => {
          await installed(dir, seenConnector('gamma'))
          const next = await turn('two')
          // the install finished before turn/start, so a Codex that listed tools at turn start would have it
          expect(connectorFunctions(next, 'gamma')).toEqual([])
          expect(connectorFunctions(next, 'alpha')).toHaveLength(MEMORY_TOOLS.length)
        },
      )

      it(
        'with watchConnectors and the Codex adapter, a connector installed mid-thread is in the next turn, and a ' +
          'removed one is gone',
        async () => {
          watch = await watchConnectors(
            async () => {
              await codexMcpReload((method, params) => codex.request(method, params))()
              reloads++
            },
            { runtime, onError: (e) => reloadErrors.push(e) },
          )
          const ready = readyReports(codex, threadId)
          await installed(dir, seenConnector('beta'))
          await eventually(
            () => reloads,
            (n) => n >= 1,
          )
          await reconnected(codex, threadId, ready)
          const next = await turn('three')
          expect(connectorFunctions(next, 'beta').sort()).toEqual(memoryFunctions('beta'))
          // the reconnect also brings what the helper did not see happen (gamma, before it started)
          expect(connectorFunctions(next, 'gamma').sort()).toEqual(memoryFunctions('gamma'))

          const before = reloads
          const readyBefore = readyReports(codex, threadId)
          await uninstalled(dir, 'beta')
          await eventually(
            () => reloads,
            (n) => n > before,
          )
          await reconnected(codex, threadId, readyBefore)
          const after = await turn('four')
          expect(connectorFunctions(after, 'beta')).toEqual([])
          expect(connectorFunctions(after, 'alpha')).toHaveLength(MEMORY_TOOLS.length)
          expect(reloadErrors).toEqual([])
        },
      )

      it(
        'the token reaches neither the model, nor argv, ' + 'nor any file Codex, the adapter or the projection wrote',
        () => {
          const token = runtime.env.TUTTI_CONNECTOR_TOKEN!
          expect(token).toMatch(TOKEN_SHAPE)
          for (const req of fake.requests) expect(JSON.stringify(req)).not.toContain(token)
          const pids = pidsWithEnv(`CODEX_HOME=${runtime.env.CODEX_HOME}`)
          expect(pids.length).toBeGreaterThan(0)
          for (const pid of pids) for (const argv of treeArgv(pid)) expect(argv).not.toMatch(TOKEN_SHAPE)
          // the adapter's revision went into the session's own config.toml, beside the token's variable name
          expect(fs.readFileSync(path.join(runtime.env.CODEX_HOME!, 'config.toml'), 'utf8')).toMatch(
            /X-Tutti-Connectors-Revision/,
          )
          // Codex snapshots the shell environment for the model's commands into $CODEX_HOME/shell_snapshots/ while it
          // runs
          expect(filesContaining(runtime.env.CODEX_HOME!, token)).toEqual([])
          // the state dir: the projection's files, sessions.json (hashes only), daemon.log
          expect(filesContaining(dir, token)).toEqual([])
          expect(filesContaining(workspace, token)).toEqual([])
        },
      )
    })
  })

  describe.skipIf(!cliHas('session:exec'))('started by `tutti session exec --provider codex -- codex …`', () => {
    it(
      'at start: the first model request has the alpha tools and the alpha Skill; ' +
        'no token in argv or the files left behind',
      async () => {
        const home = newHome()
        userCodexHome(home, fake)
        const env = { PATH: process.env.PATH, HOME: home, TUTTI_STATE_DIR: dir, ...FAKE_KEY, RUST_LOG: 'warn' }
        await firstRequestOfExec(
          process.execPath,
          [
            BIN,
            'session',
            'exec',
            '--provider',
            'codex',
            '--workspace',
            workspace,
            '--session',
            'codex-exec',
            '--',
            codexBinary(),
          ],
          env,
        )
        expect(filesContaining(home, TOKEN_SHAPE)).toEqual([])
        expect(filesContaining(dir, TOKEN_SHAPE)).toEqual([])
      },
    )
  })

  describe.skipIf(!cliHas('session:bridge'))(
    'with a static `codex mcp add connector -- tutti session bridge` config (stdio)',
    () => {
      let home: string
      let env: NodeJS.ProcessEnv
      beforeAll(async () => {
        home = newHome()
        const codexHome = userCodexHome(home, fake)
        // `tutti` on PATH, as an installed tutti is; Codex gives a stdio server only the variables it is told to
        const bin = path.join(home, 'bin')
        fs.mkdirSync(bin)
        fs.writeFileSync(path.join(bin, 'tutti'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, {
          mode: 0o755,
        })
        env = {
          PATH: `${bin}${path.delimiter}${process.env.PATH}`,
          HOME: home,
          CODEX_HOME: codexHome,
          ...FAKE_KEY,
          RUST_LOG: 'warn',
        }
        const add = await run(
          codexBinary(),
          ['mcp', 'add', '--env', `TUTTI_STATE_DIR=${dir}`, 'connector', '--', 'tutti', 'session', 'bridge'],
          { env, cwd: workspace },
        )
        expect(add.code, add.stderr).toBe(0)
      })

      describe('a running codex app-server thread through the bridge', () => {
        let codex: CodexAppServer
        let threadId: string
        let watch: ConnectorWatch | undefined
        let reloads = 0
        const reloadErrors: unknown[] = []
        const turn = threadTurns(
          () => codex,
          () => threadId,
        )
        beforeAll(async () => {
          // info: Codex logs the bridge's list_changed ("MCP server tool list changed"), which the test waits for
          codex = await CodexAppServer.start({ ...env, RUST_LOG: 'info' }, workspace)
          threadId = await startedThread(codex)
        })
        afterAll(async () => {
          await watch?.close()
          await codex?.stop()
        })

        // Skills are not checked here: Codex 0.171 reads Skills from its Skill roots only, and a static config names
        // none.
        // An app-server thread rather than `codex exec`: exec sends its first model request without waiting for a stdio
        // server still starting (seen with a server that takes 3 s: no connector tools at all), and the bridge is a
        // node process
        it(
          'at start: once Codex reports the bridge ready, the first turn has every alpha tool in the ' +
            "mcp__connector namespace with the server's schema",
          async () => {
            const first = await turn('one')
            expect(connectorFunctions(first, 'alpha').sort()).toEqual(memoryFunctions('alpha'))
            const search = functionsOf(first)
              .get(NAMESPACE)!
              .find((t) => t.name === 'alpha_search_nodes')!
            expect(search.parameters).toMatchObject({ type: 'object', properties: { query: { type: 'string' } } })
          },
        )

        it(
          "without the helper, Codex receives the bridge's list_changed " +
            'and still leaves the new connector out of the next turn',
          async () => {
            const heard = () => codex.stderr.join('').split('MCP server tool list changed').length - 1
            const before = heard()
            await installed(dir, seenConnector('epsilon'))
            expect(await until(() => heard() > before)).toBe(true)
            const next = await turn('two')
            expect(connectorFunctions(next, 'epsilon')).toEqual([])
          },
        )

        it(
          'with watchConnectors and the Codex adapter ' +
            '(a new revision in the bridge environment), the next turn carries it',
          async () => {
            // the host watches with a session of its own: the bridge's session is the bridge's
            const watcher = await prepareRuntime({
              provider: 'tutti-agent',
              workspace,
              session: 'codex-bridge-watch',
              stateDir: dir,
              env: { ...process.env, HOME: home },
            })
            watch = await watchConnectors(
              async () => {
                await codexMcpReload((method, params) => codex.request(method, params))()
                reloads++
              },
              { runtime: watcher, onError: (e) => reloadErrors.push(e) },
            )
            const ready = readyReports(codex, threadId)
            await installed(dir, seenConnector('zeta'))
            await eventually(
              () => reloads,
              (n) => n >= 1,
            )
            await reconnected(codex, threadId, ready)
            const next = await turn('three')
            const statuses = codex.notifications
              .filter((n) => n.method === 'mcpServer/startupStatus/updated')
              .map((n) => n.params.status)
            const seen =
              `the turn's connector tools: ${namespaceFunctions(next, NAMESPACE).join(' ') || 'none'}; ` +
              `Codex's server status: ${JSON.stringify(statuses)}; stderr: ${codex.stderr.join('').slice(-3000)}`
            expect(connectorFunctions(next, 'zeta').sort(), seen).toEqual(memoryFunctions('zeta'))
            expect(connectorFunctions(next, 'epsilon').sort()).toEqual(memoryFunctions('epsilon'))
            expect(fs.readFileSync(path.join(env.CODEX_HOME!, 'config.toml'), 'utf8')).toMatch(
              /TUTTI_CONNECTORS_REVISION/,
            )
            expect(reloadErrors).toEqual([])
          },
        )

        it('no token in the model requests, argv, the Codex home or the state dir', () => {
          for (const req of fake.requests) expect(JSON.stringify(req)).not.toMatch(TOKEN_SHAPE)
          for (const pid of pidsWithEnv(`CODEX_HOME=${env.CODEX_HOME}`))
            for (const argv of treeArgv(pid)) expect(argv).not.toMatch(TOKEN_SHAPE)
          expect(filesContaining(home, TOKEN_SHAPE)).toEqual([])
          expect(filesContaining(dir, TOKEN_SHAPE)).toEqual([])
        })
      })
    },
  )
})

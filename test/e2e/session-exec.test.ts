import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { run as runProgram } from '../support/package-install.js'
import { CLAUDE_OFFLINE, claudeBinary, codexBinary } from '../support/agents.js'
import { TOKEN_SHAPE } from '../support/bridge-clients.js'
import {
  filesUnder,
  probeAgent,
  probeEvents,
  startTutti,
  type ProbeEvent,
  type Running,
} from '../support/agent-probe.js'
import { fullConnector } from '../support/fixture-connector.js'
import { modernPost } from '../support/mcp-clients.js'
import { BIN, cleanupState, readDaemonJson, REPO, tempStateDir, tuttiJson } from '../support/tutti.js'

type Start = Extract<ProbeEvent, { event: 'start' }>
const started = (events: ProbeEvent[]) => events.find((e): e is Start => e.event === 'start')
const signals = (events: ProbeEvent[]) => events.flatMap((e) => (e.event === 'signal' ? [e.signal] : []))

describe('tutti session exec', () => {
  let dir: string
  let probe: ReturnType<typeof probeAgent>
  let workspace: string
  let env: NodeJS.ProcessEnv
  /** Every token an agent of this file was given: none may be found in any file, log or output. */
  const tokens: string[] = []
  const outputs: string[] = []

  beforeAll(async () => {
    dir = tempStateDir('exec')
    probe = probeAgent()
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-exec-ws-'))
    env = { PATH: `${probe.bin}${path.delimiter}${process.env.PATH}`, AGENT_REPORT: probe.report }
    await tuttiJson(dir, ['connector', 'install', fullConnector('kit')])
  })
  afterAll(async () => {
    try {
      const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      const everything = [log, ...outputs, ...Object.values(filesUnder(dir))].join('\n')
      for (const token of tokens) expect(everything).not.toContain(token)
      // nor any other token: every session token has this shape
      expect(everything).not.toMatch(TOKEN_SHAPE)
    } finally {
      await cleanupState(dir)
      probe.cleanup()
      fs.rmSync(workspace, { recursive: true, force: true })
    }
  })

  /** Execs a test leaves running when it fails: SIGTERM, which exec passes on to the waiting probe. */
  const running: Running[] = []
  const startExec = (args: string[], mode: string, cwd = workspace): Running => {
    const run = startTutti(dir, ['session', 'exec', ...args], { env: { ...env, AGENT_MODE: mode }, cwd })
    running.push(run)
    return run
  }
  afterEach(async () => {
    for (const run of running.splice(0)) {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM')
      await run.done
    }
  })

  /** Run exec to its end with the probe agent in `mode`; the probe's report starts empty. */
  const exec = async (args: string[], mode = 'exit:0', extra: NodeJS.ProcessEnv = {}) => {
    fs.rmSync(probe.report, { force: true })
    const res = await startTutti(dir, ['session', 'exec', ...args], {
      env: { ...env, AGENT_MODE: mode, ...extra },
      cwd: workspace,
    }).done
    outputs.push(res.stdout, res.stderr)
    return res
  }
  const url = () => `http://127.0.0.1:${readDaemonJson(dir)!.port}/mcp/connector`
  const tokenWorks = async (token: string) =>
    (await modernPost({ url: url(), headers: { Authorization: `Bearer ${token}` } }, 'tools/list')).status === 200
  const sessionRecords = () =>
    Object.values(JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')).sessions) as Array<{
      workspace: string
      session: string
      provider: string
    }>

  it('bad input exits 2 with a clear message, and prepares no session', async () => {
    const before = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8').split('session token issued').length
    const notExecutable = path.join(probe.bin, 'notes.txt')
    fs.writeFileSync(notExecutable, 'not a program\n', { mode: 0o644 })
    const cases: Array<[string[], RegExp]> = [
      [
        ['--provider', 'gemini', '--', 'probe-agent'],
        /unknown provider "gemini": session exec starts claude, codex, tutti-agent/,
      ],
      [
        ['--provider', 'acp', '--', 'probe-agent'],
        /ACP agent gets the connector server from its client in session\/new/,
      ],
      [['--provider', 'claude', 'probe-agent'], /give the agent command after `--`/],
      [['--provider', 'claude', '--'], /nothing to run after `--`/],
      [
        ['--provider', 'claude', '--', 'no-such-agent-x1'],
        /the agent executable no-such-agent-x1 was not found on PATH/,
      ],
      [['--provider', 'codex', '--', './missing/agent'], /the agent executable \.\/missing\/agent does not exist/],
      [['--provider', 'codex', '--', notExecutable], /the agent executable .*notes\.txt is not an executable file/],
      [['--provider', 'codex', '--session', '', '--', 'probe-agent'], /--session: session must not be empty/],
      [['--', 'probe-agent'], /Missing required flag provider/],
    ]
    for (const [args, message] of cases) {
      const res = await exec(args)
      expect(res.code, args.join(' ')).toBe(2)
      expect(res.stderr, args.join(' ')).toMatch(message)
      expect(probe.events(), 'the agent was not started').toEqual([])
    }
    expect(fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8').split('session token issued').length).toBe(before)
  })

  it(
    'claude: --mcp-config and --add-dir right after the executable, the token only in its environment; the exit ' +
      'status is the agent’s; at exit the session is revoked and its files are gone',
    async () => {
      fs.rmSync(probe.report, { force: true })
      // a workspace reached through a symlink: the default workspace id is the real path
      const link = `${workspace}-link`
      fs.symlinkSync(workspace, link)
      try {
        const run = startExec(['--provider', 'claude', '--', 'probe-agent', 'a', '--b', 'a'], 'wait', link)
        const start = started(await probeEvents(probe.events, (e) => started(e) !== undefined))!
        const token = start.env.TUTTI_CONNECTOR_TOKEN!
        tokens.push(token)
        expect(token).toMatch(/^tutti_/)
        const [flag1, config, flag2, addDir, ...rest] = start.argv
        expect([flag1, flag2, rest]).toEqual(['--mcp-config', '--add-dir', ['a', '--b', 'a']])
        expect(start.ppid).toBe(run.child.pid)
        expect(start.env.PATH!.split(path.delimiter)[0]).toBe(path.join(dir, 'bin'))
        expect(fs.existsSync(path.join(dir, 'bin', 'tutti-connector-kit'))).toBe(true)
        // the files exec wrote name the variable; neither they nor the agent's argv hold the token
        const mcpConfig = JSON.parse(fs.readFileSync(config!, 'utf8'))
        expect(mcpConfig.mcpServers.connector).toEqual({
          type: 'http',
          url: url(),
          headers: { Authorization: 'Bearer ${TUTTI_CONNECTOR_TOKEN}' },
        })
        expect(fs.readdirSync(path.join(addDir!, '.claude', 'skills'))).toEqual(['kit-workflow'])
        const written = filesUnder(path.join(dir, 'sessions'))
        expect(Object.keys(written).length).toBeGreaterThan(0)
        for (const [file, text] of Object.entries(written)) expect(text, file).not.toContain(token)
        expect(fs.readFileSync(`/proc/${start.pid}/cmdline`, 'utf8')).not.toContain(token)
        expect(fs.readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8')).not.toContain(token)
        expect(sessionRecords()).toEqual(
          expect.arrayContaining([
            {
              workspace: fs.realpathSync(workspace),
              session: expect.stringMatching(/^[0-9a-f-]{36}$/),
              provider: 'claude',
              issuedAt: expect.any(String),
              // exec owns it (no expiry): it ends with exec, even one killed with -9
              owner: { pid: run.child.pid, start: expect.any(String), pidNamespace: expect.any(String) },
            },
          ]),
        )
        expect(await tokenWorks(token)).toBe(true)

        process.kill(run.child.pid!, 'SIGTERM')
        const res = await run.done
        outputs.push(res.stdout, res.stderr)
        // the probe does not handle SIGTERM: it dies of it, and exec reports that as a shell does
        expect(res.code).toBe(143)
        expect(res.stderr).toBe('')
        expect(await tokenWorks(token)).toBe(false)
        expect(fs.existsSync(path.dirname(path.dirname(config!)))).toBe(false)
      } finally {
        fs.rmSync(link, { force: true })
      }

      const exited = await exec(
        ['--provider', 'claude', '--workspace', 'w1', '--session', 's1', '--', 'probe-agent'],
        'exit:7',
      )
      expect(exited.code).toBe(7)
      tokens.push(started(probe.events())!.env.TUTTI_CONNECTOR_TOKEN!)
      expect(sessionRecords().filter((r) => r.session === 's1')).toEqual([])
    },
  )

  it(
    'codex and tutti-agent: ' +
      'a session CODEX_HOME with [mcp_servers.connector] naming the token variable, argv untouched',
    async () => {
      for (const provider of ['codex', 'tutti-agent']) {
        fs.rmSync(probe.report, { force: true })
        const run = startExec(['--provider', provider, '--', 'probe-agent', 'exec', 'fix it'], 'wait')
        const start = started(await probeEvents(probe.events, (e) => started(e) !== undefined))!
        const token = start.env.TUTTI_CONNECTOR_TOKEN!
        tokens.push(token)
        expect(start.argv, provider).toEqual(['exec', 'fix it'])
        const home = start.env.CODEX_HOME!
        expect(home.startsWith(path.join(dir, 'sessions'))).toBe(true)
        const toml = fs.readFileSync(path.join(home, 'config.toml'), 'utf8')
        expect(toml).toContain('bearer_token_env_var = "TUTTI_CONNECTOR_TOKEN"')
        expect(fs.readdirSync(path.join(home, 'skills'))).toEqual(['kit-workflow'])
        for (const [file, text] of Object.entries(filesUnder(path.join(dir, 'sessions'))))
          expect(text, file).not.toContain(token)
        expect(fs.readFileSync(`/proc/${start.pid}/cmdline`, 'utf8')).not.toContain(token)
        expect(sessionRecords().some((r) => r.provider === provider)).toBe(true)
        process.kill(run.child.pid!, 'SIGTERM')
        expect((await run.done).code).toBe(143)
        expect(fs.existsSync(home)).toBe(false)
        expect(await tokenWorks(token)).toBe(false)
      }
    },
  )

  it('signals sent to exec reach the agent once each, in order', async () => {
    fs.rmSync(probe.report, { force: true })
    const run = startExec(['--provider', 'codex', '--', 'probe-agent'], 'wait')
    tokens.push(started(await probeEvents(probe.events, (e) => started(e) !== undefined))!.env.TUTTI_CONNECTOR_TOKEN!)
    const sent = ['SIGINT', 'SIGHUP', 'SIGWINCH', 'SIGUSR1', 'SIGUSR2', 'SIGQUIT', 'SIGINT'] as const
    for (const [i, signal] of sent.entries()) {
      process.kill(run.child.pid!, signal)
      // the next one only once this one arrived: each is seen exactly when it was sent
      expect(signals(await probeEvents(probe.events, (e) => signals(e).length > i))).toEqual(sent.slice(0, i + 1))
    }
    process.kill(run.child.pid!, 'SIGTERM')
    expect((await run.done).code).toBe(143)
    expect(signals(probe.events())).toEqual([...sent])
  })

  it(
    'exec knows when a terminal delivers Ctrl-C itself: ' + 'as the foreground job of a terminal, and not without one',
    async () => {
      const probeScript =
        `import(${JSON.stringify(path.join(REPO, 'dist/runtime/exec/signal-relay.js'))})` +
        `.then((m) => console.log('foreground=' + m.inTerminalForeground()))`
      const run = (file: string, args: string[]) =>
        new Promise<string>((resolve) =>
          execFile(file, args, { env: process.env, timeout: 30_000 }, (_err, stdout) => resolve(stdout)),
        )
      expect(
        await run('script', [
          '-qfec',
          `exec '${process.execPath}' -e "${probeScript.replaceAll('"', '\\"')}"`,
          '/dev/null',
        ]),
      ).toContain('foreground=true')
      expect(await run('setsid', ['-w', process.execPath, '-e', probeScript])).toContain('foreground=false')
    },
  )

  it(
    'a Ctrl-C on a terminal reaches the agent once: ' + 'the terminal delivers it, exec does not pass it on again',
    async () => {
      fs.rmSync(probe.report, { force: true })
      // script(1) runs exec on a pseudo-terminal as the foreground job; \x03 written to it is the terminal's Ctrl-C
      const command = `exec '${process.execPath}' '${BIN}' session exec --provider codex -- probe-agent`
      const child = spawn('script', ['-qfec', command, '/dev/null'], {
        env: { ...process.env, ...env, TUTTI_STATE_DIR: dir, AGENT_MODE: 'wait' },
        cwd: workspace,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
      try {
        const start = started(await probeEvents(probe.events, (e) => started(e) !== undefined))!
        tokens.push(start.env.TUTTI_CONNECTOR_TOKEN!)
        // the probe's parent is exec itself (the shell exec'd it): proven before it is signalled
        expect(fs.readFileSync(`/proc/${start.ppid}/cmdline`, 'utf8').split('\0')).toEqual(
          expect.arrayContaining(['session', 'exec']),
        )
        child.stdin.write('\x03')
        await probeEvents(probe.events, (e) => signals(e).length >= 1)
        // a later signal exec does pass on: had exec relayed the Ctrl-C too, it would have arrived before this one
        process.kill(start.ppid, 'SIGUSR1')
        expect(signals(await probeEvents(probe.events, (e) => signals(e).includes('SIGUSR1')))).toEqual([
          'SIGINT',
          'SIGUSR1',
        ])
        process.kill(start.ppid, 'SIGTERM')
        expect(await closed).toBe(143)
      } finally {
        child.stdin.end()
        if (child.exitCode === null) child.kill('SIGHUP')
        await closed
      }
    },
  )

  it('stdio is the agent’s own', async () => {
    fs.rmSync(probe.report, { force: true })
    const res = await startTutti(dir, ['session', 'exec', '--provider', 'claude', '--', 'probe-agent'], {
      env: { ...env, AGENT_MODE: 'stdio' },
      cwd: workspace,
      input: 'line one\nline two\n',
    }).done
    tokens.push(started(probe.events())!.env.TUTTI_CONNECTOR_TOKEN!)
    outputs.push(res.stdout, res.stderr)
    expect(res).toEqual({ code: 0, stdout: 'line one\nline two\n', stderr: 'err\n' })
  })

  it('a daemon that cannot start: the agent starts without connectors, after one warning line', async () => {
    const broken = tempStateDir('exec-broken')
    try {
      fs.rmSync(probe.report, { force: true })
      // a malformed limit fails the daemon's start (http-limits.ts), as any start failure would
      const res = await startTutti(broken, ['session', 'exec', '--provider', 'claude', '--', 'probe-agent', 'x'], {
        env: { ...env, AGENT_MODE: 'exit:5', TUTTI_DAEMON_HTTP_LIMITS: '{"nonsense":1}' },
        cwd: workspace,
      }).done
      expect(res.code).toBe(5)
      const lines = res.stderr.trimEnd().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(
        new RegExp(
          /^tutti: starting probe-agent without connectors: /.source +
            /the session could not be prepared \(the daemon exited during start/.source,
        ),
      )
      const start = started(probe.events())!
      expect(start.argv).toEqual(['x'])
      expect(start.env.TUTTI_CONNECTOR_TOKEN).toBeUndefined()
      expect(start.env.CODEX_HOME).toBeUndefined()
      expect(start.env.PATH).toBe(env.PATH)
    } finally {
      await cleanupState(broken)
    }
  })

  describe('real agents from npm', () => {
    const run = (args: string[], extra: NodeJS.ProcessEnv) =>
      runProgram(process.execPath, [BIN, 'session', 'exec', ...args], {
        env: { ...process.env, TUTTI_STATE_DIR: dir, ...CLAUDE_OFFLINE, ...extra },
        cwd: workspace,
        timeout: 90_000,
      })
    let home: string
    beforeAll(() => {
      home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-exec-home-'))
    })
    afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

    it('claude --version and codex --version run through exec with their projections', async () => {
      const claude = await run(['--provider', 'claude', '--', claudeBinary(), '--version'], { HOME: home })
      expect(claude.code, claude.stderr).toBe(0)
      expect(claude.stdout).toMatch(/\d+\.\d+\.\d+ \(Claude Code\)/)
      const codex = await run(['--provider', 'codex', '--', codexBinary(), '--version'], { HOME: home })
      expect(codex.code, codex.stderr).toBe(0)
      expect(codex.stdout).toMatch(/codex-cli \d+\.\d+\.\d+/)
      outputs.push(claude.stdout, claude.stderr, codex.stdout, codex.stderr)
    })

    it(
      "the README's one command: `tutti session exec --provider claude -- claude` gives Claude Code the connector " +
        'tools and Skills',
      async () => {
        const block = /<!-- readme-test: exec-claude -->\n```sh\n([\s\S]*?)```/.exec(
          fs.readFileSync(path.join(REPO, 'README.md'), 'utf8'),
        )?.[1]
        expect(block).toBe('tutti session exec --provider claude -- claude\n')
        // `tutti` and `claude` on PATH as a user has them; this `claude` runs the real one non-interactively (a -p
        // session prints its tools without a model)
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-exec-readme-'))
        try {
          fs.writeFileSync(path.join(bin, 'tutti'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, {
            mode: 0o755,
          })
          fs.writeFileSync(
            path.join(bin, 'claude'),
            `#!/bin/sh\n` +
              `exec '${claudeBinary()}' -p hello --output-format stream-json --verbose --strict-mcp-config "$@"\n`,
            { mode: 0o755 },
          )
          const res = await runProgram('/bin/sh', ['-c', block!], {
            env: {
              PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`,
              HOME: home,
              TUTTI_STATE_DIR: dir,
              ...CLAUDE_OFFLINE,
            },
            cwd: workspace,
            timeout: 90_000,
          })
          outputs.push(res.stdout, res.stderr)
          const init = res.stdout
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l))
            .find((m) => m.type === 'system' && m.subtype === 'init')
          expect(init, res.stdout + res.stderr).toBeDefined()
          expect(init.tools).toEqual(expect.arrayContaining(['mcp__connector__kit_read_graph']))
          expect(JSON.stringify(init.skills)).toMatch(/kit-workflow/)
        } finally {
          fs.rmSync(bin, { recursive: true, force: true })
        }
      },
    )

    it('a Claude Code session started by exec sees the connector tools and Skills', async () => {
      const res = await run(
        [
          '--provider',
          'claude',
          '--',
          claudeBinary(),
          '-p',
          'hello',
          '--output-format',
          'stream-json',
          '--verbose',
          '--strict-mcp-config',
        ],
        { HOME: home },
      )
      outputs.push(res.stdout, res.stderr)
      const init = res.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((m) => m.type === 'system' && m.subtype === 'init')
      expect(init, res.stdout + res.stderr).toBeDefined()
      expect(init.mcp_servers).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'connector', status: 'connected' })]),
      )
      expect(init.tools).toEqual(expect.arrayContaining(['mcp__connector__kit_read_graph']))
      expect(JSON.stringify(init.skills)).toMatch(/kit-workflow/)
      expect(sessionRecords().filter((r) => r.provider === 'claude')).toEqual([])
    })
  })
})

#!/usr/bin/env node
// The client command the MCP conformance suite runs for its client scenarios
// (`conformance client --command "node conformance-client-driver.mjs"`): the
// suite appends its mock server's URL and names the scenario in
// MCP_CONFORMANCE_SCENARIO. What is tested is tutti's upstream client, so the
// driver does what a user does: writes a remote connector manifest for that
// URL, installs it, connects it (an OAuth sign-in follows the authorization
// URL through the browser command), lists and calls the scenario's tools
// through the daemon's `connector` MCP server with a session token, and
// uninstalls it.
//
// Install, connect and uninstall are the runtime calls the CLI's commands make (client/connectors.js), made
// here in-process: what the CLI adds, parsing flags and printing, is tested elsewhere, and three CLI starts
// cost about a second of CPU per scenario, 37 times over. Inside the test (conformance-client.test.ts) the
// scenarios also share one daemon and one session: the test names them in TUTTI_CONFORMANCE_STATE_DIR,
// TUTTI_CONFORMANCE_URL and TUTTI_CONNECTOR_TOKEN, and each driver installs its mock under a key of its own.
// Run alone, the driver makes a state dir of its own and stops its daemon at the end.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const DIST = path.join(HERE, '..', '..', 'dist', 'runtime')
const BROWSER = path.join(HERE, 'conformance-browser.mjs')
/** @param {string} rel */
const runtime = (rel) => import(pathToFileURL(path.join(DIST, rel)).href)
const { Connectors } = await runtime('client/connectors.js')
const { prepareRuntime } = await runtime('client/sessions.js')
const { DaemonControl } = await runtime('client/daemon-control.js')
const { isTuttiError } = await runtime('errors.js')
const { statePaths } = await runtime('paths.js')
const { CLIENT_METADATA_URL_VAR } = await runtime('oauth/sign-in.js')

const shared = process.env.TUTTI_CONFORMANCE_STATE_DIR
/** A key of its own in a shared daemon (connector-key.ts: a lowercase letter, then [a-z0-9-]). */
const KEY = shared ? `conf-${randomBytes(4).toString('hex')}` : 'conf'
/**
 * A Client ID Metadata Document URL, as a published tutti would name one (the suite's mock authorization server takes
 * any https URL).
 */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json'
/** What the CLI waits for a connector's outcome (--timeout), and for the browser to come back (--sign-in-timeout). */
const OUTCOME_WAIT = { wait: true, timeoutMs: 45_000 }
const SIGN_IN_WAIT_MS = 20_000

const serverUrl = process.argv.at(-1)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {}
const isAuth = scenario.startsWith('auth/')

// named after the test run (when there is one), so that its teardown reaps a daemon this process could not stop
const run = process.env.TUTTI_TEST_RUN
const stateDir =
  shared ??
  fs.mkdtempSync(path.join(os.tmpdir(), run ? `tutti-suite-${run}-conformance-client-` : 'tutti-conformance-client-'))
const paths = statePaths(stateDir)
const connectors = new Connectors(paths, { ...process.env, [CLIENT_METADATA_URL_VAR]: CLIENT_METADATA_URL })
// the release and the browser script live outside the state dir, as a user's download would
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-conformance-release-'))
const releaseDir = path.join(workDir, 'release')
const began = Date.now()
/** @param {string} line */
const log = (line) => process.stderr.write(`[driver +${Date.now() - began} ms] ${line}\n`)

/**
 * One runtime call, logged as the CLI command it stands for with the exit code that command would have (2: bad
 * input, such as a sign-in tutti refuses; 1: a failure).
 * @param {string} command @param {() => Promise<unknown>} call
 * @returns {Promise<{ code: number, message: string }>}
 */
async function as(command, call) {
  try {
    const result = await call()
    log(`tutti ${command} -> 0\n${JSON.stringify(result)}`)
    return { code: 0, message: '' }
  } catch (err) {
    const code = isTuttiError(err) ? /** @type {{ exitCode: number }} */ (err).exitCode : 1
    const message = /** @type {Error} */ (err).message
    log(`tutti ${command} -> ${code}\n${message}`)
    return { code, message }
  }
}

function manifest() {
  const auth = isAuth
    ? { kind: 'oauth', ...(context.client_id ? { clientId: context.client_id } : {}) }
    : { kind: 'none' }
  return {
    schemaVersion: 1,
    key: KEY,
    name: 'Conformance mock',
    version: '1.0.0',
    auth,
    mcp: { transport: 'http', url: serverUrl },
  }
}

/**
 * What tutti says when only a new sign-in helps (an expired grant without a refresh token, a step-up, a new
 * authorization server).
 */
const NEEDS_SIGN_IN = /needs a new sign-in|not signed in/
/**
 * Sign-ins in all: the first, and one more when tutti asks for it, as a user would; bounded, so a server that never
 * grants ends the run.
 */
const MAX_SIGN_INS = 2
let signIns = 0

/**
 * `tutti connector connect` with the sign-in followed through the browser script; again when tutti says only a new
 * sign-in helps.
 */
async function connect() {
  const browser = path.join(workDir, 'browser.sh')
  fs.writeFileSync(browser, `#!/bin/sh\nexec "${process.execPath}" "${BROWSER}" "$1"\n`, { mode: 0o755 })
  for (;;) {
    signIns++
    // a confidential pre-registered client (auth/pre-registration): its id and secret, as --client-id and
    // --client-secret-from-env give them
    const client = context.client_secret
      ? { clientId: String(context.client_id), clientSecret: String(context.client_secret) }
      : {}
    const signIn = { browser, timeoutMs: SIGN_IN_WAIT_MS, print: log, client }
    const res = await as(`connector connect ${KEY} --browser`, () =>
      connectors.connect(KEY, { keys: [], settings: {}, signIn, ...OUTCOME_WAIT }),
    )
    if (res.code === 0) return
    if (signIns >= MAX_SIGN_INS || !NEEDS_SIGN_IN.test(res.message)) throw new Error('connect failed')
  }
}

/** The local name tutti gives an upstream tool (registry/tool-naming.ts, for names this short). */
/** @param {string} upstream */
const local = (upstream) => `${KEY}_${upstream.replace(/[^A-Za-z0-9_-]/g, '_')}`

/** The calls each scenario asks for, made against the tools tutti lists for the connector. */
/** @param {Client} client */
async function exercise(client) {
  const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith(`${KEY}_`))
  log(`connector tools: ${tools.map((t) => t.name).join(', ') || '(none)'}`)
  /** @param {string} name @param {Record<string, unknown>} args */
  const call = async (name, args) => {
    let result
    try {
      result = await client.callTool({ name, arguments: args })
    } catch (err) {
      const { message } = /** @type {Error} */ (err)
      if (!isAuth || !NEEDS_SIGN_IN.test(message) || signIns >= MAX_SIGN_INS) throw err
      log(`${name} -> ${message}; signing in again`)
      await connect()
      result = await client.callTool({ name, arguments: args })
    }
    log(`${name} -> ${JSON.stringify(result).slice(0, 500)}`)
    return result
  }
  switch (scenario) {
    case 'tools_call':
      return call(local('add_numbers'), { a: 5, b: 3 })
    case 'http-custom-headers':
      for (const c of context.toolCalls ?? []) await call(local(c.name), c.arguments)
      return
    case 'http-invalid-tool-headers':
      // only the valid tool should be listed; calling whatever is listed shows that none of the others reach the server
      for (const t of tools)
        await call(t.name, { region: 'us-west1' }).catch((err) => log(`${t.name} rejected: ${err.message}`))
      return
    case 'json-schema-2020-12-preservation': {
      const focal = tools.find((t) => t.name === local('json_schema_2020_12_tool'))
      if (!focal) throw new Error('json_schema_2020_12_tool is not listed')
      return call(local('json_schema_echo'), { schema: focal.inputSchema })
    }
    case 'sse-retry':
      return call(local('test_reconnection'), {})
    case 'json-schema-ref-no-deref':
    case 'request-metadata':
      return
    case 'http-standard-headers':
      for (const t of tools) await call(t.name, {})
      return surface(client)
    default:
      // auth/*: every listed tool once
      for (const t of tools) await call(t.name, {})
  }
}

/** The connector's prompts got and resources read through tutti, whose upstream requests carry their own headers. */
/** @param {Client} client */
async function surface(client) {
  const prompts = (await client.listPrompts()).prompts.filter((p) => p.name.startsWith(`${KEY}_`))
  for (const p of prompts) log(`${p.name} -> ${JSON.stringify(await client.getPrompt({ name: p.name })).slice(0, 300)}`)
  const resources = (await client.listResources()).resources.filter((r) => r.uri.includes(KEY))
  for (const r of resources)
    log(`${r.uri} -> ${JSON.stringify(await client.readResource({ uri: r.uri })).slice(0, 300)}`)
}

async function main() {
  fs.mkdirSync(releaseDir)
  fs.writeFileSync(path.join(releaseDir, 'tutti-connector.json'), JSON.stringify(manifest(), null, 2))
  const installed = await as(`connector install ${releaseDir}`, () =>
    connectors.install(releaseDir, { ...OUTCOME_WAIT }),
  )
  // an OAuth connector installs as needing a sign-in; anything else must be ready
  if (!isAuth && installed.code !== 0) throw new Error('install failed')
  if (isAuth) await connect()
  const binding = shared
    ? {
        url: String(process.env.TUTTI_CONFORMANCE_URL),
        headers: { authorization: `Bearer ${process.env.TUTTI_CONNECTOR_TOKEN}` },
      }
    : (
        await prepareRuntime({
          provider: 'tutti-agent',
          workspace: 'conformance',
          session: 'driver',
          stateDir,
        })
      ).mcpServers[0]
  const client = new Client(
    { name: 'conformance-driver', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  await client.connect(
    new StreamableHTTPClientTransport(new URL(binding.url), { requestInit: { headers: binding.headers } }),
  )
  try {
    await exercise(client)
  } finally {
    await client.close()
  }
}

let failed = false
try {
  await main()
} catch (err) {
  failed = true
  log(`failed: ${/** @type {Error} */ (err).stack ?? err}`)
} finally {
  // a shared daemon keeps serving the other scenarios: only this scenario's connector goes
  if (shared) await as(`connector uninstall ${KEY} --purge`, () => connectors.uninstall(KEY, { purge: true }))
  else await as('daemon stop', () => new DaemonControl(paths).stop())
  const daemonLog = path.join(stateDir, 'daemon.log')
  if (fs.existsSync(daemonLog)) {
    const lines = fs.readFileSync(daemonLog, 'utf8').split('\n')
    const own = shared ? lines.filter((l) => l.includes(`"${KEY}"`)) : lines
    log(`daemon.log:\n${own.slice(-60).join('\n')}`)
  }
  if (!process.env.TUTTI_TEST_KEEP_STATE)
    for (const dir of shared ? [workDir] : [stateDir, workDir]) fs.rmSync(dir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { baseManifest, CLI_FILE, makeConnector, skill } from './connector-fixture.js'
import { REPO } from './tutti.js'

const SDK_SERVER = pathToFileURL(path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist/index.mjs')).href
const SDK_STDIO = pathToFileURL(path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist/stdio.mjs')).href

/** The fault server's tool table, as a lazy connector declares it. */
export const FAULT_TOOLS: Array<{ name: string; description: string; inputSchema: Record<string, unknown> }> =
  JSON.parse(fs.readFileSync(path.join(REPO, 'test/fixtures/fault-tools.json'), 'utf8'))

/**
 * A connector release around test/fixtures/fault-server.mjs. The release is
 * copied into the state dir on install, so the server imports the SDK by
 * absolute file URL instead of from a node_modules next to it. Without
 * `activation` it is lazy by cache, as any stdio connector; tests of
 * restarts ask for `eager` (only an eager upstream is restarted on its own).
 */
export function faultConnector(options: {
  key: string
  version?: string
  variant?: string
  auth?: string[]
  env?: Record<string, string>
  activation?: 'eager' | 'lazy'
  /** The manifest's `mcp.maxResultBytes`. */
  maxResultBytes?: number
  manifest?: Record<string, unknown>
}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-fixture-${options.key}-`))
  const source = fs
    .readFileSync(path.join(REPO, 'test/fixtures/fault-server.mjs'), 'utf8')
    .replaceAll('__SDK_SERVER__', SDK_SERVER)
    .replaceAll('__SDK_STDIO__', SDK_STDIO)
    .replace('__TOOLS__', JSON.stringify(FAULT_TOOLS))
  fs.writeFileSync(path.join(dir, 'server.mjs'), source)
  const auth = options.auth?.length
    ? { kind: 'env', variables: options.auth.map((name) => ({ name, secret: true })) }
    : { kind: 'none' }
  const env: Record<string, string> = { FIXTURE_VARIANT: options.variant ?? 'v1', ...options.env }
  for (const name of options.auth ?? []) env[name] = `\${${name}}`
  const manifest = {
    schemaVersion: 1,
    key: options.key,
    name: `Fixture ${options.key}`,
    version: options.version ?? '1.0.0',
    description: 'fault-injection fixture',
    auth,
    mcp: {
      transport: 'stdio',
      command: 'node',
      args: ['server.mjs'],
      env,
      ...(options.activation ? { activation: options.activation } : {}),
      ...(options.maxResultBytes ? { maxResultBytes: options.maxResultBytes } : {}),
    },
    ...options.manifest,
  }
  fs.writeFileSync(path.join(dir, 'tutti-connector.json'), JSON.stringify(manifest, null, 2))
  return dir
}

/** A connector around the real npm memory server, optionally requiring a credential. */
export function memoryConnector(key: string, authVar?: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-memory-${key}-`))
  const manifest = {
    schemaVersion: 1,
    key,
    name: `Memory ${key}`,
    version: '1.0.0',
    description: 'knowledge graph memory (npm @modelcontextprotocol/server-memory)',
    auth: authVar ? { kind: 'env', variables: [{ name: authVar, secret: true }] } : { kind: 'none' },
    mcp: {
      transport: 'stdio',
      command: 'mcp-server-memory',
      env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/memory.jsonl' },
    },
  }
  fs.writeFileSync(path.join(dir, 'tutti-connector.json'), JSON.stringify(manifest, null, 2))
  return dir
}

/** A CLI-only connector around test/fixtures/probe-cli.mjs. */
export function probeConnector(
  key: string,
  options: { version?: string; auth?: string[]; release?: string } = {},
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-probe-${key}-`))
  fs.mkdirSync(path.join(dir, 'bin'))
  let source = fs.readFileSync(path.join(REPO, 'test/fixtures/probe-cli.mjs'), 'utf8')
  if (options.release)
    source = source.replace(
      '#!/usr/bin/env node\n',
      `#!/usr/bin/env node\nprocess.env.PROBE_RELEASE = ${JSON.stringify(options.release)}\n`,
    )
  fs.writeFileSync(path.join(dir, 'bin', 'probe.mjs'), source, { mode: 0o755 })
  const auth = options.auth?.length
    ? { kind: 'env', variables: options.auth.map((name) => ({ name, secret: true })) }
    : { kind: 'none' }
  fs.writeFileSync(
    path.join(dir, 'tutti-connector.json'),
    JSON.stringify({
      schemaVersion: 1,
      key,
      name: `Probe ${key}`,
      version: options.version ?? '1.0.0',
      description: 'CLI probe',
      auth,
      cli: { entrypoint: 'bin/probe.mjs' },
    }),
  )
  return dir
}

/** A lazy connector around the fault server, declaring `declared` (default: its real table). */
export function lazyConnector(
  key: string,
  options: { declared?: unknown[]; variant?: string; idleTimeoutSeconds?: number } = {},
): string {
  const dir = faultConnector({ key, variant: options.variant })
  const file = path.join(dir, 'tutti-connector.json')
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'))
  manifest.mcp.activation = 'lazy'
  manifest.mcp.tools = options.declared ?? FAULT_TOOLS
  if (options.idleTimeoutSeconds) manifest.mcp.idleTimeoutSeconds = options.idleTimeoutSeconds
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2))
  return dir
}

/**
 * A connector of every facade: MCP (the npm memory server, on PATH), a CLI and a Skill `<key>-workflow`,
 * optionally behind a secret credential. A small release on purpose: copying and hashing the bundled
 * examples' node_modules costs seconds of CPU per install.
 */
export function fullConnector(
  key: string,
  options: { auth?: string; version?: string; activation?: 'eager' } = {},
): string {
  return makeConnector(
    {
      ...baseManifest({ key, name: `Full ${key}`, skills: 'skills', version: options.version ?? '1.0.0' }),
      ...(options.auth ? { auth: { kind: 'env', variables: [{ name: options.auth, secret: true }] } } : {}),
      mcp: {
        transport: 'stdio',
        command: 'mcp-server-memory',
        env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/memory.jsonl' },
        ...(options.activation ? { activation: options.activation } : {}),
      },
    },
    { ...CLI_FILE, [`skills/${key}-workflow/SKILL.md`]: skill(`${key}-workflow`) },
  )
}

/** A connector whose server is one SDK fixture (`test/fixtures/<fixture>`) as `server.mjs`, the SDK by file URL. */
function sdkFixtureConnector(key: string, fixture: string, name: string, description: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-${name.toLowerCase()}-${key}-`))
  const source = fs
    .readFileSync(path.join(REPO, 'test/fixtures', fixture), 'utf8')
    .replaceAll('__SDK_SERVER__', SDK_SERVER)
    .replaceAll('__SDK_STDIO__', SDK_STDIO)
  fs.writeFileSync(path.join(dir, 'server.mjs'), source)
  const manifest = {
    schemaVersion: 1,
    key,
    name: `${name} ${key}`,
    version: '1.0.0',
    description,
    auth: { kind: 'none' },
    mcp: { transport: 'stdio', command: 'node', args: ['server.mjs'] },
  }
  fs.writeFileSync(path.join(dir, 'tutti-connector.json'), JSON.stringify(manifest, null, 2))
  return dir
}

/** A connector around test/fixtures/app-server.mjs: an MCP App (a `ui://` page) and the tools it calls. */
export const appConnector = (key: string): string =>
  sdkFixtureConnector(key, 'app-server.mjs', 'App', 'an MCP App fixture')

/** A connector around test/fixtures/modern-news-server.mjs: a stdio server that speaks 2026-07-28. */
export const modernNewsConnector = (key: string): string =>
  sdkFixtureConnector(key, 'modern-news-server.mjs', 'News', 'a stdio server of the 2026-07-28 era')

/**
 * A connector around test/fixtures/conformance-server.mjs (with conformance-tools.mjs and conformance-tasks.mjs
 * beside it): the tools, prompts and resources the MCP conformance suite's server scenarios call by their own names.
 */
export function conformanceConnector(key: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-conformance-${key}-`))
  for (const file of ['conformance-server.mjs', 'conformance-tools.mjs', 'conformance-tasks.mjs']) {
    const source = fs
      .readFileSync(path.join(REPO, 'test/fixtures', file), 'utf8')
      .replaceAll('__SDK_SERVER__', SDK_SERVER)
      .replaceAll('__SDK_STDIO__', SDK_STDIO)
    fs.writeFileSync(path.join(dir, file), source)
  }
  const manifest = {
    schemaVersion: 1,
    key,
    name: `Conformance ${key}`,
    version: '1.0.0',
    description: "the conformance suite's reference server, as its scenarios describe it",
    auth: { kind: 'none' },
    mcp: { transport: 'stdio', command: 'node', args: ['conformance-server.mjs'] },
  }
  fs.writeFileSync(path.join(dir, 'tutti-connector.json'), JSON.stringify(manifest, null, 2))
  return dir
}

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseManifest } from '../../src/runtime/manifest/load.js'
import { PluginServerMapper } from '../../src/runtime/sources/plugin-mcp-config.js'
import { detectPlugin, pluginSource } from '../../src/runtime/sources/plugin-source.js'
import { ServerJsonInputs } from '../../src/runtime/sources/server-json-inputs.js'
import { serverJsonSource } from '../../src/runtime/sources/server-json-source.js'
import { deriveKey } from '../../src/runtime/sources/source-key.js'

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-sources-unit-'))
const writeJson = (doc: unknown) => {
  const file = path.join(tmp(), 'server.json')
  fs.writeFileSync(file, JSON.stringify(doc))
  return file
}
const noNpm = async () => {
  throw new Error('no npm in this test')
}

describe('connector keys from package names', () => {
  it.each([
    ['@modelcontextprotocol/server-memory', 'memory'],
    ['@modelcontextprotocol/server-filesystem', 'filesystem'],
    ['io.github.example/weather-mcp', 'weather'],
    ['mcp-server-git', 'git'],
    ['github-mcp-server', 'github'],
    ['My_Plugin', 'my-plugin'],
    ['server', 'server'],
  ])('%s → %s', (name, key) => expect(deriveKey(name)).toBe(key))
  it('--key wins, and is validated', () => {
    expect(deriveKey('@x/server-memory', 'mem')).toBe('mem')
    expect(() => deriveKey('x', 'Bad_Key')).toThrow(/--key "Bad_Key" must match/)
    expect(() => deriveKey('@scope/123')).toThrow(/choose one with --key/)
  })
})

describe('plugin server configs', () => {
  it('root and data placeholders become tutti variables; user variables are declared where they are used', () => {
    const mapped = new PluginServerMapper().toTutti(
      {
        command: '${CLAUDE_PLUGIN_ROOT}/bin/server',
        args: ['--root', '${PLUGIN_ROOT}/conf', '--region', '${REGION:-eu}', '--org', '${ORG}'],
        env: { DATA: '${CLAUDE_PLUGIN_DATA}/db', TOKEN: '${API_TOKEN}' },
      },
      ['--extra'],
    )
    expect(mapped.mcp).toEqual({
      transport: 'stdio',
      command: 'bin/server',
      args: ['--root', '${TUTTI_CONNECTOR_ROOT}/conf', '--region', '${REGION}', '--org', '${ORG}', '--extra'],
      env: { DATA: '${TUTTI_CONNECTOR_DATA}/db', TOKEN: '${API_TOKEN}' },
    })
    // a secret never in argv: ORG (in args) is a setting, API_TOKEN (in env) a secret variable
    expect(mapped.variables).toEqual([{ name: 'API_TOKEN', secret: true }])
    expect(mapped.config).toEqual([{ name: 'REGION', default: 'eu' }, { name: 'ORG' }])
  })
  it('a remote server keeps its headers, with their variables declared secret', () => {
    const mapped = new PluginServerMapper().toTutti(
      { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${EXAMPLE_TOKEN}' } },
      [],
    )
    expect(mapped.mcp).toEqual({
      transport: 'http',
      url: 'https://api.example.com/mcp',
      headers: { Authorization: 'Bearer ${EXAMPLE_TOKEN}' },
    })
    expect(mapped.variables).toEqual([{ name: 'EXAMPLE_TOKEN', secret: true }])
  })
})

describe('server.json inputs', () => {
  it(
    'arguments: fixed values, {variables}, inputs as settings; ' + 'optional ones with nothing to pass are left out',
    () => {
      const inputs = new ServerJsonInputs()
      const args = inputs.arguments([
        { type: 'positional', value: 'mcp' },
        { type: 'named', name: '--host', default: 'localhost', isRequired: true },
        { type: 'named', name: '--port', format: 'number' },
        { type: 'named', name: '-e', value: 'DB_TYPE={db_type}', variables: { db_type: { default: 'postgres' } } },
        { type: 'positional', valueHint: 'target_dir', isRequired: true },
      ])
      expect(args).toEqual(['mcp', '--host', '${HOST}', '-e', 'DB_TYPE=${DB_TYPE}', '${TARGET_DIR}'])
      expect([...inputs.config.values()]).toEqual([
        { name: 'HOST', default: 'localhost' },
        { name: 'DB_TYPE', default: 'postgres' },
        { name: 'TARGET_DIR' },
      ])
    },
  )
  it('environment: secrets are auth variables (optional ones do not gate), others settings with defaults', () => {
    const inputs = new ServerJsonInputs()
    const env = inputs.environment([
      { name: 'API_KEY', isSecret: true, isRequired: true },
      { name: 'OPTIONAL_KEY', isSecret: true },
      { name: 'UNITS', default: 'celsius' },
      { name: 'URL', value: 'https://{host}/v1', variables: { host: { default: 'api.example.com' } } },
    ])
    expect(env).toEqual({ URL: 'https://${HOST}/v1' })
    expect([...inputs.variables.values()]).toEqual([
      { name: 'API_KEY', secret: true },
      { name: 'OPTIONAL_KEY', secret: true, required: false },
    ])
    const manifest = parseManifest(
      JSON.stringify({
        schemaVersion: 1,
        key: 'x',
        name: 'x',
        version: '1',
        ...inputs.manifestParts(),
        mcp: { transport: 'stdio', command: 'x', env },
      }),
    )
    expect(manifest.auth).toMatchObject({ kind: 'env' })
  })
  it('a secret input in the arguments is a setting, with a warning', () => {
    const inputs = new ServerJsonInputs()
    expect(inputs.arguments([{ type: 'named', name: '--token', isSecret: true, isRequired: true }])).toEqual([
      '--token',
      '${TOKEN}',
    ])
    expect(inputs.warnings[0]).toMatch(/TOKEN is secret but goes in the server's arguments/)
  })
})

describe('server.json documents', () => {
  it('a Streamable HTTP remote with URL variables and a secret header', async () => {
    const file = writeJson({
      name: 'io.example/remote-notes',
      description: 'notes in the cloud',
      version: '2.0.0',
      remotes: [
        {
          type: 'streamable-http',
          url: 'https://{tenant}.example.com/mcp',
          variables: { tenant: { default: 'acme' } },
          headers: [{ name: 'X-API-Key', isSecret: true, isRequired: true }],
        },
      ],
    })
    const source = await serverJsonSource(file, { env: process.env, scratchDir: async () => tmp() }, noNpm)
    expect(source.manifest).toMatchObject({
      key: 'remote-notes',
      mcp: { transport: 'http', url: 'https://${TENANT}.example.com/mcp', headers: { 'X-API-Key': '${X_API_KEY}' } },
      auth: { kind: 'env', variables: [{ name: 'X_API_KEY', secret: true }] },
      config: [{ name: 'TENANT', default: 'acme' }],
    })
    expect(() => parseManifest(JSON.stringify(source.manifest))).not.toThrow()
  })
  it('an OCI package runs under docker when docker is on PATH, environment passed with -e', async () => {
    const bin = tmp()
    fs.writeFileSync(path.join(bin, 'docker'), '#!/bin/sh\n', { mode: 0o755 })
    const file = writeJson({
      name: 'io.example/db-manager',
      description: 'd',
      version: '3.1.0',
      packages: [
        {
          registryType: 'oci',
          identifier: 'example/db-mcp',
          version: '3.1.0',
          transport: { type: 'stdio' },
          runtimeArguments: [{ type: 'named', name: '--network', value: 'host' }],
          packageArguments: [{ type: 'positional', value: 'serve' }],
          environmentVariables: [{ name: 'DB_PASSWORD', isSecret: true, isRequired: true }],
        },
      ],
    })
    const source = await serverJsonSource(file, { env: { PATH: bin }, scratchDir: async () => tmp() }, noNpm)
    expect(source.manifest.mcp).toEqual({
      transport: 'stdio',
      command: 'docker',
      args: ['run', '-i', '--rm', '-e', 'DB_PASSWORD', '--network', 'host', 'example/db-mcp:3.1.0', 'serve'],
    })
  })
  it("a runtimeHint is one of its registry type's runtimes by bare name, or refused naming the field", async () => {
    // every name is on PATH: only the rule refuses them, not a missing program
    const bin = tmp()
    for (const name of ['sh', 'podman', 'python'])
      fs.writeFileSync(path.join(bin, name), '#!/bin/sh\n', { mode: 0o755 })
    const hinted = (registryType: string, runtimeHint: string) =>
      writeJson({
        name: 'io.example/hinted',
        description: 'd',
        version: '1.0.0',
        packages: [{ registryType, identifier: 'hinted', version: '1.0.0', runtimeHint, transport: { type: 'stdio' } }],
      })
    const source = (file: string) =>
      serverJsonSource(file, { env: { PATH: bin }, scratchDir: async () => tmp() }, noNpm)
    await expect(source(hinted('pypi', 'sh'))).rejects.toThrow(
      'server.json: packages.0.runtimeHint "sh" is not a runtime for registryType "pypi" (expected uvx or python)',
    )
    for (const [type, hint] of [
      ['pypi', '/bin/sh'],
      ['npm', '../npx'],
      ['npm', 'node; rm -rf ~'],
      ['npm', 'NPX'],
      ['oci', 'docker '],
      ['nuget', 'uvx'],
    ]) {
      await expect(source(hinted(type!, hint!))).rejects.toThrow(
        `packages.0.runtimeHint ${JSON.stringify(hint)} is not a runtime for registryType "${type}"`,
      )
    }
    expect((await source(hinted('pypi', 'python'))).manifest.mcp).toMatchObject({
      command: 'python',
      args: ['hinted@1.0.0'],
    })
    expect((await source(hinted('oci', 'podman'))).manifest.mcp).toMatchObject({
      command: 'podman',
      args: ['run', '-i', '--rm', 'hinted:1.0.0'],
    })
  })
  it('SSE remotes and unknown registries are refused by name', async () => {
    const sse = writeJson({
      name: 'io.example/a',
      description: 'd',
      version: '1',
      remotes: [{ type: 'sse', url: 'https://example.com/sse' }],
    })
    await expect(serverJsonSource(sse, { env: process.env, scratchDir: async () => tmp() }, noNpm)).rejects.toThrow(
      /remotes\.0: the SSE transport is not supported/,
    )
    const cargo = writeJson({
      name: 'io.example/b',
      description: 'd',
      version: '1',
      packages: [{ registryType: 'cargo', identifier: 'b', transport: { type: 'stdio' } }],
    })
    await expect(serverJsonSource(cargo, { env: process.env, scratchDir: async () => tmp() }, noNpm)).rejects.toThrow(
      /registryType "cargo" is not supported/,
    )
    const none = writeJson({ name: 'io.example/c', description: 'd', version: '1' })
    await expect(serverJsonSource(none, { env: process.env, scratchDir: async () => tmp() }, noNpm)).rejects.toThrow(
      /names no packages and no remotes/,
    )
  })
})

describe('plugin packages that cannot be mapped', () => {
  const plugin = (files: Record<string, unknown>) => {
    const dir = tmp()
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true })
      fs.writeFileSync(path.join(dir, rel), typeof content === 'string' ? content : JSON.stringify(content))
    }
    return dir
  }
  const map = async (dir: string, server?: string) =>
    pluginSource(dir, (await detectPlugin(dir))!, {
      env: process.env,
      scratchDir: async () => tmp(),
      ...(server ? { server } : {}),
    })

  it('an SSE server, an mcpServers path outside the plugin or missing, a server entry of no known shape', async () => {
    await expect(
      map(
        plugin({
          '.claude-plugin/plugin.json': { name: 'p' },
          '.mcp.json': { mcpServers: { s: { type: 'sse', url: 'https://x/sse' } } },
        }),
      ),
    ).rejects.toThrow(/mcpServers\.s: the SSE transport is not supported/)
    await expect(
      map(plugin({ '.codex-plugin/plugin.json': { name: 'p', mcpServers: '../elsewhere.json' } })),
    ).rejects.toThrow(/mcpServers: "\.\.\/elsewhere\.json" is outside the plugin/)
    await expect(
      map(plugin({ '.codex-plugin/plugin.json': { name: 'p', mcpServers: './servers.json' } })),
    ).rejects.toThrow(/mcpServers: servers\.json does not exist/)
    await expect(
      map(plugin({ 'plugin.json': { name: 'p' }, 'mcp.json': { mcpServers: { s: { args: ['x'] } } } })),
    ).rejects.toThrow(/mcp\.json: mcpServers\.s: /)
  })
  it('--server names one of several, and an unknown name lists them', async () => {
    const dir = plugin({
      '.claude-plugin/plugin.json': { name: 'p' },
      '.mcp.json': { mcpServers: { a: { command: 'node', args: ['a.js'] }, b: { command: 'node', args: ['b.js'] } } },
    })
    expect((await map(dir, 'b')).manifest.mcp).toMatchObject({ command: 'node', args: ['b.js'] })
    await expect(map(dir, 'c')).rejects.toThrow(/has no MCP server "c"; its servers: a, b/)
  })
  it('without servers, a plugin of Skills alone; --server for it is refused', async () => {
    const dir = plugin({
      '.claude-plugin/plugin.json': { name: 'docs-only' },
      'skills/guide/SKILL.md': '---\nname: guide\ndescription: d\n---\n',
    })
    const source = await map(dir)
    expect(source.manifest).toMatchObject({ key: 'docs-only', skills: 'skills' })
    expect(source.manifest).not.toHaveProperty('mcp')
    await expect(map(dir, 'x')).rejects.toThrow(/--server x: this Claude Code plugin has no MCP servers/)
  })
})

import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime } from 'tutti'
import { makeConnector } from '../support/connector-fixture.js'
import { installed } from '../support/in-process.js'
import { modernClient } from '../support/mcp-clients.js'
import { cleanupState, REPO, tempStateDir, tuttiJson } from '../support/tutti.js'

const SDK_DIST = path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist')
const SDK = (file: string) => pathToFileURL(path.join(SDK_DIST, file)).href

/** A connector around test/fixtures/named-tools-server.mjs, serving tools named `names`. */
function namedTools(key: string, names: string[]): string {
  const server = fs
    .readFileSync(path.join(REPO, 'test/fixtures/named-tools-server.mjs'), 'utf8')
    .replaceAll('__SDK_SERVER__', SDK('index.mjs'))
    .replaceAll('__SDK_STDIO__', SDK('stdio.mjs'))
  const manifest = {
    schemaVersion: 1,
    key,
    name: `Named ${key}`,
    version: '1.0.0',
    description: 'tools that already carry a prefix',
    auth: { kind: 'none' },
    mcp: { transport: 'stdio', command: 'node', args: ['server.mjs'], env: { FIXTURE_TOOL_NAMES: names.join(',') } },
  }
  return makeConnector(manifest, { 'server.mjs': server })
}

describe('published tool names', () => {
  let dir: string
  beforeAll(async () => {
    dir = tempStateDir('tool-names')
    const slack = namedTools('slack', ['slack_post_message', 'slack_list_channels', 'search'])
    await installed(dir, slack)
    // `status` is published as git_status by the plain rule, so the server's own git_status keeps its prefix
    await installed(dir, namedTools('git', ['git_status', 'status', 'git_log', 'gitlog']))
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('a tool named <key>_… is not prefixed twice unless the name is taken; calls reach the upstream', async () => {
    const runtime = await prepareRuntime({ provider: 'tutti-agent', workspace: dir, session: 'names', stateDir: dir })
    const client = await modernClient(runtime.mcpServers[0]!)
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort()
      const git = ['git_git_status', 'git_gitlog', 'git_log', 'git_status']
      expect(names).toEqual([...git, 'slack_list_channels', 'slack_post_message', 'slack_search'])
      const called = async (name: string) => {
        const result = await client.callTool({ name, arguments: {} })
        return (result.content as Array<{ text: string }>)[0]!.text
      }
      expect(await called('slack_post_message')).toBe('called slack_post_message')
      expect(await called('slack_search')).toBe('called search')
      expect(await called('git_status')).toBe('called status')
      expect(await called('git_git_status')).toBe('called git_status')
      expect(await called('git_log')).toBe('called git_log')
      const available = await tuttiJson(dir, ['connector', 'available', '--json'])
      const slack = available.connectors.find((c: { key: string }) => c.key === 'slack')
      expect(slack.interfaces[0]).toMatchObject({ toolPrefix: 'slack_', status: 'ready' })
    } finally {
      await client.close()
    }
  })
})

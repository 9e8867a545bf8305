import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { FAULT_TOOLS } from './fixture-connector.js'
import { REPO } from './tutti.js'

const SDK_SERVER = pathToFileURL(path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist/index.mjs')).href
const SDK_STDIO = pathToFileURL(path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist/stdio.mjs')).href

function write(dir: string, files: Record<string, string | { content: string; mode: number }>): string {
  for (const [rel, file] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true })
    if (typeof file === 'string') fs.writeFileSync(path.join(dir, rel), file)
    else fs.writeFileSync(path.join(dir, rel), file.content, { mode: file.mode })
  }
  return dir
}

/** The fault server as a plugin's own file (it imports the SDK by absolute URL: the plugin has no node_modules). */
const serverSource = () =>
  fs
    .readFileSync(path.join(REPO, 'test/fixtures/fault-server.mjs'), 'utf8')
    .replaceAll('__SDK_SERVER__', SDK_SERVER)
    .replaceAll('__SDK_STDIO__', SDK_STDIO)
    .replace('__TOOLS__', JSON.stringify(FAULT_TOOLS))

const skillFile = (name: string) =>
  `---\nname: ${name}\ndescription: How to use the ${name} plugin's tools and command` +
  `\n---\n\n# ${name}\n\nCall the echo tool first.\n`
const cliFile = {
  content:
    '#!/usr/bin/env node\nconsole.log(`plugin cli ${process.argv.slice(2).join(" ")} ' +
    'data=${process.env.TUTTI_CONNECTOR_DATA ? "set" : "unset"}`)\n',
  mode: 0o755,
}

/**
 * A plugin package of one format with one stdio server (root and data
 * placeholders in its config), a Skill, one executable in bin/, and parts
 * tutti does not carry (a slash command, hooks).
 */
export function pluginPackage(
  format: 'claude' | 'codex' | 'agent',
  name: string,
  options: { servers?: number } = {},
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-plugin-${format}-`))
  const root = format === 'claude' ? '${CLAUDE_PLUGIN_ROOT}' : '${PLUGIN_ROOT}'
  const data = format === 'claude' ? '${CLAUDE_PLUGIN_DATA}' : '${PLUGIN_DATA}'
  const servers: Record<string, unknown> = {}
  for (let i = 0; i < (options.servers ?? 1); i++)
    servers[i === 0 ? 'main' : `extra-${i}`] = {
      command: 'node',
      args: [`${root}/server.mjs`],
      env: { FIXTURE_VARIANT: 'v1', PLUGIN_DATA_AT: data },
    }
  const manifest = { name, version: '1.2.0', description: `${format} plugin fixture` }
  const files: Record<string, string | { content: string; mode: number }> = {
    'server.mjs': serverSource(),
    [`skills/${name}-guide/SKILL.md`]: skillFile(`${name}-guide`),
    [`bin/${name}`]: cliFile,
    'commands/hello.md': '---\ndescription: say hello\n---\nSay hello.\n',
    'hooks/hooks.json': '{"hooks":{}}\n',
  }
  if (format === 'claude')
    Object.assign(files, {
      '.claude-plugin/plugin.json': JSON.stringify(manifest),
      '.mcp.json': JSON.stringify({ mcpServers: servers }),
    })
  if (format === 'codex')
    Object.assign(files, {
      '.codex-plugin/plugin.json': JSON.stringify({ ...manifest, mcpServers: './.mcp.json', skills: './skills/' }),
      '.mcp.json': JSON.stringify({ mcpServers: servers }),
    })
  if (format === 'agent')
    Object.assign(files, {
      'plugin.json': JSON.stringify({
        $schema: 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json',
        ...manifest,
      }),
      'mcp.json': JSON.stringify({
        $schema: 'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json',
        mcpServers: servers,
      }),
    })
  return write(dir, files)
}

/** A server.json (schema 2025-12-11) in a directory of its own. */
export function serverJson(doc: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-server-json-'))
  const file = path.join(dir, 'server.json')
  fs.writeFileSync(
    file,
    JSON.stringify(
      { $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json', ...doc },
      null,
      2,
    ),
  )
  return file
}

/**
 * A Claude Code or Codex plugin with the given `mcpServers` entries (written as the client writes
 * them) and the fault server as `server.mjs`, for tests of how each field of an entry is carried.
 */
export function pluginWithServers(format: 'claude' | 'codex', name: string, mcpServers: Record<string, unknown>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-plugin-${format}-`))
  const manifest = { name, version: '1.0.0', description: `${format} plugin with its own server entries` }
  return write(dir, {
    'server.mjs': serverSource(),
    [`.${format}-plugin/plugin.json`]: JSON.stringify(manifest),
    '.mcp.json': JSON.stringify({ mcpServers }),
  })
}

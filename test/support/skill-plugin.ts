import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO } from './tutti.js'

const SDK_DIST = path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist')
const SDK = (file: string) => pathToFileURL(path.join(SDK_DIST, file)).href

/** The plugin server's tools: snake_case as real servers name theirs, one already prefixed, two plain words. */
export const LINEAR_TOOLS = ['search_issues', 'create_issue', 'linear_get_issue', 'echo', 'get-sum']

/** The triage Skill: it names tools by their upstream names in code, in prose, and as Claude Code spells them. */
export const TRIAGE_SKILL = [
  '---',
  'name: linear-triage',
  'description: Triage Linear issues for the user',
  '---',
  '# Triage',
  '',
  "1. Call `search_issues` with the user's words.",
  '2. Open each hit with linear_get_issue.',
  '3. If nothing fits, use mcp__linear__create_issue (see reference.md), then echo the result back to the user.',
  '',
].join('\n')

export const NOTES_SKILL =
  '---\nname: linear-notes\ndescription: Keep notes on issues\n---\n# Notes\n\nWrite notes as a list.\n'

/** The note's mapping lines for TRIAGE_SKILL, published under connector `linear`. */
export const TRIAGE_MAPPING = [
  // each tool the Skill names, with the name it is published under
  '- `create_issue` → `linear_create_issue`',
  '- `search_issues` → `linear_search_issues`',
]

/**
 * A Claude Code plugin `linear` whose one stdio server is
 * test/fixtures/named-tools-server.mjs serving LINEAR_TOOLS, with the triage
 * Skill (and a file beside it) and a Skill that names no tool.
 */
export function linearPlugin(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-plugin-linear-'))
  const server = fs
    .readFileSync(path.join(REPO, 'test/fixtures/named-tools-server.mjs'), 'utf8')
    .replaceAll('__SDK_SERVER__', SDK('index.mjs'))
    .replaceAll('__SDK_STDIO__', SDK('stdio.mjs'))
  const env = { FIXTURE_TOOL_NAMES: LINEAR_TOOLS.join(',') }
  const entry = { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/server.mjs'], env }
  const files: Record<string, string> = {
    '.claude-plugin/plugin.json': JSON.stringify({ name: 'linear', version: '1.0.0', description: 'Linear issues' }),
    '.mcp.json': JSON.stringify({ mcpServers: { linear: entry } }),
    'server.mjs': server,
    'skills/linear-triage/SKILL.md': TRIAGE_SKILL,
    'skills/linear-triage/reference.md': '# Fields of a new issue\n',
    'skills/linear-notes/SKILL.md': NOTES_SKILL,
  }
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true })
    fs.writeFileSync(path.join(dir, rel), text)
  }
  return dir
}

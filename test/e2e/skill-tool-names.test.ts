import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime, type ClaudeProjection, type CodexProjection } from 'tutti'
import { modernClient } from '../support/mcp-clients.js'
import { linearPlugin, NOTES_SKILL, TRIAGE_MAPPING, TRIAGE_SKILL } from '../support/skill-plugin.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

const HEADING = '## Tool names in this session'

describe("a plugin's Skills name the tools as published", () => {
  let dir: string
  let plugin: string
  beforeAll(async () => {
    dir = tempStateDir('skill-tool-names')
    plugin = linearPlugin()
    await tuttiJson(dir, ['connector', 'install', plugin])
  })
  afterAll(async () => {
    await cleanupState(dir)
    fs.rmSync(plugin, { recursive: true, force: true })
  })

  /** The lines of the generated note (from its heading on), or [] when the Skill has none. */
  const noteOf = (text: string): string[] =>
    text.includes(HEADING) ? text.slice(text.indexOf(HEADING)).split('\n') : []

  it('the Claude projection appends a note mapping the upstream names the Skill mentions, and only those', async () => {
    const runtime = await prepareRuntime({ provider: 'claude', workspace: dir, session: 'claude', stateDir: dir })
    const skills = path.join((runtime.projection as ClaudeProjection).addDir, '.claude', 'skills')
    const triage = fs.readFileSync(path.join(skills, 'linear-triage', 'SKILL.md'), 'utf8')
    // the Skill's own text first, unchanged, then the note
    expect(triage.startsWith(TRIAGE_SKILL)).toBe(true)
    const note = noteOf(triage)
    expect(note.filter((l) => l.startsWith('- '))).toEqual(TRIAGE_MAPPING)
    // published as it is (no double prefix), and plain words of the prose: not mapped
    expect(triage).not.toMatch(/`linear_get_issue` →|`echo` →|`get-sum` →/)
    // the Skill's other files are where SKILL.md says they are
    const reference = fs.readFileSync(path.join(skills, 'linear-triage', 'reference.md'), 'utf8')
    expect(reference).toBe('# Fields of a new issue\n')
    // a Skill that names no tool is the release's directory itself
    const releases = path.join(fs.realpathSync(dir), 'connectors', 'linear', 'releases')
    expect(fs.realpathSync(path.join(skills, 'linear-notes')).startsWith(releases)).toBe(true)
    expect(fs.readFileSync(path.join(skills, 'linear-notes', 'SKILL.md'), 'utf8')).toBe(NOTES_SKILL)
    // the noted one keeps its place in a mirror of the release: the plugin manifest is above it as before
    const noted = fs.realpathSync(path.join(skills, 'linear-triage'))
    expect(noted.startsWith(releases)).toBe(false)
    expect(fs.existsSync(path.join(noted, '..', '..', '.claude-plugin', 'plugin.json'))).toBe(true)
  })

  it('the Codex projection gets the same note; neither the plugin source nor the stored release changes', async () => {
    const runtime = await prepareRuntime({ provider: 'codex', workspace: dir, session: 'codex', stateDir: dir })
    const skills = path.join((runtime.projection as CodexProjection).codexHome, 'skills')
    const triage = fs.readFileSync(path.join(skills, 'linear-triage', 'SKILL.md'), 'utf8')
    expect(triage.startsWith(TRIAGE_SKILL)).toBe(true)
    expect(noteOf(triage).filter((l) => l.startsWith('- '))).toEqual(TRIAGE_MAPPING)
    expect(fs.readFileSync(path.join(plugin, 'skills/linear-triage/SKILL.md'), 'utf8')).toBe(TRIAGE_SKILL)
    const release = path.dirname(fs.realpathSync(path.join(skills, 'linear-triage', 'reference.md')))
    expect(release.startsWith(fs.realpathSync(dir))).toBe(true)
    expect(fs.readFileSync(path.join(release, 'SKILL.md'), 'utf8')).toBe(TRIAGE_SKILL)
  })

  it('the names in the note are served, and a call by one reaches the tool the Skill named', async () => {
    const runtime = await prepareRuntime({ provider: 'tutti-agent', workspace: dir, session: 'calls', stateDir: dir })
    const client = await modernClient(runtime.mcpServers[0]!)
    try {
      const served = (await client.listTools()).tools.map((t) => t.name)
      const named = ['linear_search_issues', 'linear_create_issue', 'linear_get_issue']
      expect(served).toEqual(expect.arrayContaining(named))
      const result = await client.callTool({ name: 'linear_search_issues', arguments: {} })
      expect((result.content as Array<{ text: string }>)[0]!.text).toBe('called search_issues')
    } finally {
      await client.close()
    }
  })
})

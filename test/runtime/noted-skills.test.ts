import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { linkSkills } from '../../src/runtime/sessions/session-dir.js'

/**
 * linkSkills with noted Skills: two Skills of one release that name tools
 * by upstream names, one that does not, one reached through a link inside
 * the release. The e2e tests (skill-tool-names, model-sees-skill-tool-names)
 * drive the same through the daemon and the real agents.
 */
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-noted-skills-'))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const skill = (name: string, body: string) => `---\nname: ${name}\ndescription: d\n---\n${body}\n`

function release(): string {
  const root = fs.mkdtempSync(path.join(scratch, 'release-'))
  const files: Record<string, string> = {
    '.codex-plugin/plugin.json': '{"name":"kit"}',
    'skills/search/SKILL.md': skill('search', 'Call `search_issues`.'),
    'skills/search/scripts/run.sh': 'echo run\n',
    'skills/create/SKILL.md': skill('create', 'Then create_issue.'),
    'skills/plain/SKILL.md': skill('plain', 'Echo the result.'),
    'shared/linked/SKILL.md': skill('linked', 'Use `echo`.'),
  }
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  fs.symlinkSync('../shared/linked', path.join(root, 'skills/linked'))
  return root
}

describe('noted Skills in a session', () => {
  it('each noted Skill gets its note in one mirror of the release; the rest stays a link into it', async () => {
    const root = release()
    const before = fs.readFileSync(path.join(root, 'skills/search/SKILL.md'), 'utf8')
    const tools = ['search_issues', 'create_issue', 'echo'].map((t) => ({ upstream: t, published: `kit_${t}` }))
    const names = ['search', 'create', 'plain', 'linked']
    const skills = names.map((name) => ({ name, dir: path.join(root, 'skills', name) }))
    const target = path.join(scratch, 'session', 'skills')
    const roots = [{ connector: 'kit', dir: path.join(root, 'skills'), releaseRoot: root, skills, tools }]
    const linked = await linkSkills(target, roots)
    expect(linked).toEqual(names)
    const read = (rel: string) => fs.readFileSync(path.join(target, rel), 'utf8')
    expect(read('search/SKILL.md')).toContain('- `search_issues` → `kit_search_issues`')
    expect(read('create/SKILL.md')).toContain('- `create_issue` → `kit_create_issue`')
    expect(read('linked/SKILL.md')).toContain('- `echo` → `kit_echo`')
    expect(read('search/scripts/run.sh')).toBe('echo run\n')
    expect(read('plain/SKILL.md')).not.toContain('Tool names')
    expect(fs.realpathSync(path.join(target, 'plain'))).toBe(fs.realpathSync(path.join(root, 'skills/plain')))
    // both noted Skills sit in one mirror, under the plugin manifest, as in the release
    const search = fs.realpathSync(path.join(target, 'search'))
    expect(path.dirname(search)).toBe(path.dirname(fs.realpathSync(path.join(target, 'create'))))
    expect(fs.existsSync(path.join(search, '..', '..', '.codex-plugin', 'plugin.json'))).toBe(true)
    expect(fs.readFileSync(path.join(root, 'skills/search/SKILL.md'), 'utf8')).toBe(before)
  })

  it('without the served names (none listed yet), every Skill is a link into the release', async () => {
    const root = release()
    const skills = [{ name: 'search', dir: path.join(root, 'skills', 'search') }]
    const target = path.join(scratch, 'unlisted', 'skills')
    await linkSkills(target, [{ connector: 'kit', dir: path.join(root, 'skills'), releaseRoot: root, skills }])
    expect(fs.realpathSync(path.join(target, 'search'))).toBe(fs.realpathSync(path.join(root, 'skills/search')))
    expect(fs.existsSync(path.join(scratch, 'unlisted', '.tutti-noted-skills'))).toBe(false)
  })
})

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { baseManifest, CLI_FILE, makeConnector, skill } from '../support/connector-fixture.js'
import { cleanupState, EXAMPLES, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

// Every bad manifest must exit 2, name the offending field, and leave the state directory as it was.
const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-outside-'))
fs.writeFileSync(path.join(outside, 'secret.txt'), 'not yours')
fs.mkdirSync(path.join(outside, 'skill'))
fs.writeFileSync(path.join(outside, 'skill', 'SKILL.md'), skill('stolen'))

const cases: Array<{ name: string; dir: () => string; field: RegExp }> = [
  { name: 'missing key', dir: () => makeConnector({ ...baseManifest(), key: undefined }, CLI_FILE), field: /key: .*expected string/ },
  { name: 'bad key pattern (underscore)', dir: () => makeConnector(baseManifest({ key: 'my_conn' }), CLI_FILE), field: /key: must match/ },
  { name: 'bad key pattern (too long)', dir: () => makeConnector(baseManifest({ key: 'a'.repeat(25) }), CLI_FILE), field: /key: must match/ },
  { name: 'unknown top-level field', dir: () => makeConnector(baseManifest({ homepage: 'x' }), CLI_FILE), field: /homepage: unknown field/ },
  { name: 'unknown nested field', dir: () => makeConnector(baseManifest({ mcp: { transport: 'stdio', command: 'node', timeout: 3 } }), CLI_FILE), field: /mcp\.timeout: unknown field/ },
  { name: 'path escaping with ..', dir: () => makeConnector(baseManifest({ cli: { entrypoint: '../outside.js' } })), field: /cli\.entrypoint: must stay inside the release/ },
  { name: 'absolute path', dir: () => makeConnector(baseManifest({ cli: { entrypoint: '/bin/sh' } })), field: /cli\.entrypoint: must be a relative path/ },
  { name: 'symlink escape (entrypoint)', dir: () => makeConnector(baseManifest({ cli: { entrypoint: 'bin/cli.js' } }), { 'bin/cli.js': { symlink: path.join(outside, 'secret.txt') } }), field: /symlink .*bin\/cli\.js.* points outside the release/ },
  { name: 'symlink escape (skills dir)', dir: () => makeConnector(baseManifest({ skills: 'skills' }), { ...CLI_FILE, skills: { symlink: outside } }), field: /skills.*(outside|symlink)/ },
  { name: 'lazy without tools', dir: () => makeConnector(baseManifest({ mcp: { transport: 'stdio', command: 'node', args: ['s.js'], activation: 'lazy' } }), { ...CLI_FILE, 's.js': '' }), field: /mcp\.tools: lazy activation requires/ },
  { name: 'bad skill front matter (no description)', dir: () => makeConnector(baseManifest({ skills: 'skills' }), { ...CLI_FILE, 'skills/a/SKILL.md': '---\nname: a\n---\nbody\n' }), field: /skills\/a\/SKILL\.md: description: .*expected string/ },
  { name: 'skill without front matter', dir: () => makeConnector(baseManifest({ skills: 'skills' }), { ...CLI_FILE, 'skills/a/SKILL.md': '# no front matter\n' }), field: /skills\/a\/SKILL\.md: missing YAML front matter/ },
  { name: 'duplicate skill names', dir: () => makeConnector(baseManifest({ skills: 'skills' }), { ...CLI_FILE, 'skills/a/SKILL.md': skill('same'), 'skills/b/SKILL.md': skill('same') }), field: /skills\/b\/SKILL\.md: duplicate skill name "same"/ },
  { name: 'undeclared ${VAR}', dir: () => makeConnector(baseManifest({ mcp: { transport: 'http', url: 'https://example.invalid/mcp', headers: { Authorization: 'Bearer ${HOME}' } } }), CLI_FILE), field: /mcp\.headers\.Authorization: \$\{HOME\} is not a declared auth variable/ },
  { name: 'wrong schemaVersion', dir: () => makeConnector(baseManifest({ schemaVersion: 2 }), CLI_FILE), field: /schemaVersion: must be 1/ },
  { name: 'invalid JSON', dir: () => makeConnector('{ "schemaVersion": 1, ', CLI_FILE), field: /not valid JSON/ },
  { name: 'tool schema root not an object', dir: () => makeConnector(baseManifest({ mcp: { transport: 'stdio', command: 'node', tools: [{ name: 't', inputSchema: { type: 'array' } }] } }), CLI_FILE), field: /mcp\.tools\[0\]\.inputSchema\.type: the root of an inputSchema must be type "object"/ },
  { name: 'entrypoint missing', dir: () => makeConnector(baseManifest({ cli: { entrypoint: 'bin/nope.js' } })), field: /cli\.entrypoint: "bin\/nope\.js" does not exist/ },
  { name: 'mcp arg escaping', dir: () => makeConnector(baseManifest({ mcp: { transport: 'stdio', command: 'node', args: ['../../etc/passwd'] } }), CLI_FILE), field: /mcp\.args\[0\]: .*escapes the release/ },
]

describe('bad manifests', () => {
  let stateDir: string
  let before: Record<string, string>

  beforeAll(async () => {
    stateDir = tempStateDir('bad')
    // a real installed connector, so "nothing changed" covers an existing state too
    await tuttiJson(stateDir, ['connector', 'install', path.join(EXAMPLES, 'notes')])
    before = snapshotTree(stateDir)
  })
  afterAll(async () => {
    await cleanupState(stateDir)
  })

  it.each(cases)('$name → exit 2, names the field, changes nothing', async ({ dir, field }) => {
    const src = dir()
    const res = await tutti(stateDir, ['connector', 'install', src, '--json'])
    expect(res.code).toBe(2)
    const body = JSON.parse(res.stdout)
    expect(body.error.code).toBe('MANIFEST_INVALID')
    expect(body.error.message).toMatch(field)
    expect(snapshotTree(stateDir)).toEqual(before)
    fs.rmSync(src, { recursive: true, force: true })
  })

  it('a human-mode error goes to stderr with the same message and exit 2', async () => {
    const src = makeConnector(baseManifest({ key: 'Bad Key' }), CLI_FILE)
    const res = await tutti(stateDir, ['connector', 'install', src])
    expect(res.code).toBe(2)
    expect(res.stdout).toBe('')
    expect(res.stderr).toMatch(/tutti-connector\.json: key: must match/)
    expect(snapshotTree(stateDir)).toEqual(before)
  })

  it('a directory without a manifest → exit 2 MANIFEST_NOT_FOUND', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-empty-'))
    const res = await tutti(stateDir, ['connector', 'install', empty, '--json'])
    expect(res.code).toBe(2)
    expect(JSON.parse(res.stdout).error).toMatchObject({ code: 'MANIFEST_NOT_FOUND' })
    expect(snapshotTree(stateDir)).toEqual(before)
  })

  it('unknown flags → exit 2 with the flag named, nothing changed', async () => {
    const res = await tutti(stateDir, ['connector', 'install', path.join(EXAMPLES, 'notes'), '--frobnicate', '--json'])
    expect(res.code).toBe(2)
    expect(JSON.parse(res.stdout).error).toMatchObject({ code: 'ARGUMENT_INVALID' })
    expect(JSON.parse(res.stdout).error.message).toMatch(/--frobnicate/)
    expect(snapshotTree(stateDir)).toEqual(before)
  })
})

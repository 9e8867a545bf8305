import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { loadRelease, parseManifest } from '../../src/runtime/manifest/load.js'
import {
  declaredToolsOf,
  effectiveActivation,
  expandVariables,
  isAuthReady,
} from '../../src/runtime/manifest/schema.js'
import { RELEASE_LIMITS } from '../../src/runtime/release/release-tree.js'
import { parseSkillFile } from '../../src/runtime/skills/skill-file.js'
import { EXAMPLES } from '../support/tutti.js'

it('the bundled examples are valid releases with their skills', async () => {
  const notes = await loadRelease(path.join(EXAMPLES, 'notes'))
  expect(notes.manifest).toMatchObject({
    key: 'notes',
    mcp: { transport: 'stdio' },
    cli: { entrypoint: 'bin/notes.js' },
  })
  expect(notes.skills).toEqual([
    { name: 'notes-workflow', title: 'Notes Workflow', description: expect.any(String), dir: 'notes-workflow' },
  ])
  const everything = await loadRelease(path.join(EXAMPLES, 'everything'))
  expect(everything.manifest.auth).toEqual({
    kind: 'env',
    variables: [{ name: 'EVERYTHING_API_KEY', secret: true, description: expect.any(String) }],
  })
})

it('defaults: auth none, stdio lazy by cache, empty args/env', () => {
  const m = parseManifest(
    JSON.stringify({ schemaVersion: 1, key: 'a', name: 'A', version: '1', mcp: { transport: 'stdio', command: 'x' } }),
  )
  expect(m.auth).toEqual({ kind: 'none' })
  expect(m.mcp).toEqual({ transport: 'stdio', command: 'x', args: [], env: {} })
  expect(effectiveActivation(m.mcp!)).toBe('cached')
})

it('input schemas are kept verbatim, any keyword', () => {
  const inputSchema = {
    type: 'object',
    properties: { q: { type: 'string', 'x-mcp-header': 'Query' } },
    required: ['q'],
    additionalProperties: false,
    $defs: { a: {} },
  }
  const m = parseManifest(
    JSON.stringify({
      schemaVersion: 1,
      key: 'a',
      name: 'A',
      version: '1',
      mcp: { transport: 'stdio', command: 'x', activation: 'lazy', tools: [{ name: 't', inputSchema }] },
    }),
  )
  expect(declaredToolsOf(m.mcp)?.[0]?.inputSchema).toEqual(inputSchema)
})

it('reports every issue with its path, not just the first', () => {
  expect(() => parseManifest(JSON.stringify({ schemaVersion: 1, key: 'A', name: '', version: '1', extra: 1 }))).toThrow(
    /key: must match[\s\S]*name: must not be empty[\s\S]*extra: unknown field/,
  )
})

it('a connector must bring something', () => {
  expect(() => parseManifest(JSON.stringify({ schemaVersion: 1, key: 'a', name: 'A', version: '1' }))).toThrow(
    /at least one of "mcp", "cli" or "skills"/,
  )
})

it('reserved TUTTI_ auth variables are refused', () => {
  expect(() =>
    parseManifest(
      JSON.stringify({
        schemaVersion: 1,
        key: 'a',
        name: 'A',
        version: '1',
        cli: { entrypoint: 'x' },
        auth: { kind: 'env', variables: [{ name: 'TUTTI_CONNECTOR_DATA' }] },
      }),
    ),
  ).toThrow(/auth\.variables\[0\]\.name: names starting with TUTTI_ are reserved/)
})

it('variables expand only from the given table; auth readiness needs every variable', () => {
  expect(expandVariables('Bearer ${T}/${TUTTI_CONNECTOR_DATA}', { T: 'x', TUTTI_CONNECTOR_DATA: '/d' })).toBe(
    'Bearer x//d',
  )
  const m = parseManifest(fs.readFileSync(path.join(EXAMPLES, 'everything', 'tutti-connector.json'), 'utf8'))
  expect(isAuthReady(m, {})).toBe(false)
  expect(isAuthReady(m, { EVERYTHING_API_KEY: '' })).toBe(false)
  expect(isAuthReady(m, { EVERYTHING_API_KEY: 'k' })).toBe(true)
})

it('skill front matter: name, description, optional title; bad YAML is named', () => {
  expect(parseSkillFile('---\nname: a-b\ndescription: d\ntitle: T\n---\nbody', 'x')).toEqual({
    name: 'a-b',
    description: 'd',
    title: 'T',
  })
  expect(() => parseSkillFile('---\nname: [unclosed\n---\n', 'skills/a/SKILL.md')).toThrow(
    /skills\/a\/SKILL\.md: front matter is not valid YAML/,
  )
  expect(() => parseSkillFile('---\nname: Bad Name\ndescription: d\n---\n', 'w')).toThrow(/w: name: must be lowercase/)
})

it('activation: eager and lazy as written, remote servers eager', () => {
  const stdio = (activation?: string) =>
    parseManifest(
      JSON.stringify({
        schemaVersion: 1,
        key: 'a',
        name: 'A',
        version: '1',
        mcp: {
          transport: 'stdio',
          command: 'x',
          ...(activation ? { activation } : {}),
          ...(activation === 'lazy' ? { tools: [{ name: 't', inputSchema: { type: 'object' } }] } : {}),
        },
      }),
    ).mcp!
  expect(effectiveActivation(stdio('eager'))).toBe('eager')
  expect(effectiveActivation(stdio('lazy'))).toBe('lazy')
  const http = parseManifest(
    JSON.stringify({
      schemaVersion: 1,
      key: 'a',
      name: 'A',
      version: '1',
      mcp: { transport: 'http', url: 'https://example.com/mcp' },
    }),
  ).mcp!
  expect(effectiveActivation(http)).toBe('eager')
})

it('a release past the tree limits names the release and the limits, not its manifest', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-deep-release-'))
  try {
    fs.writeFileSync(
      path.join(root, 'tutti-connector.json'),
      JSON.stringify({ schemaVersion: 1, key: 'deep', name: 'Deep', version: '1.0.0', skills: 'skills' }),
    )
    fs.mkdirSync(path.join(root, ...Array.from({ length: RELEASE_LIMITS.maxDepth + 2 }, () => 'd')), {
      recursive: true,
    })
    const error = await loadRelease(root).then(
      () => undefined,
      (err: Error) => err,
    )
    const limits = '(at most 20000 files, 256 MiB, 32 levels of directories, npm dependencies included)'
    expect(error?.message).toMatch(
      /^the release is larger than tutti takes: directory nesting deeper than 32 at d(\/d)+ /,
    )
    expect(error?.message.endsWith(limits)).toBe(true)
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
})

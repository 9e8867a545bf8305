import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadRelease } from '../../src/runtime/manifest/load.js'
import { statePaths } from '../../src/runtime/paths.js'
import { walkRelease } from '../../src/runtime/release/release-tree.js'
import { copyAndDigest, digestRelease, storeRelease } from '../../src/runtime/store/release-store.js'
import { baseManifest, CLI_FILE, makeConnector, skill } from '../support/connector-fixture.js'

// The store copies a release and digests it in one synchronous pass (a node_modules is thousands of small
// files). What must hold: the digest is the one digestRelease gives for the copy, in the same format (stored
// releases are found again by it), the copy is read-only, and a file swapped for a symlink since the walk is
// refused rather than copied through.
describe('the release store', () => {
  const dirs: string[] = []
  const scratch = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-release-store-'))
    dirs.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) {
      for (const p of fs.readdirSync(dir, { recursive: true }) as string[]) {
        const abs = path.join(dir, p)
        if (!fs.lstatSync(abs).isSymbolicLink()) fs.chmodSync(abs, 0o755)
      }
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
  const release = (): string =>
    makeConnector(baseManifest({ key: 'stored', skills: 'skills' }), {
      ...CLI_FILE,
      'skills/stored-guide/SKILL.md': skill('stored-guide'),
      'lib/data.json': '{"a":1}',
      'lib/link.json': { symlink: 'data.json' },
      'node_modules/dep/index.js': 'module.exports = 1\n',
    })

  it('digests the copy as digestRelease does, and the store keeps it read-only under that digest', async () => {
    const source = await loadRelease(release())
    const to = path.join(scratch(), 'copy')
    const digest = await copyAndDigest(source.root, to, source.entries)
    expect(digest).toBe(await digestRelease(to, await walkRelease(to)))
    expect(digest).toBe(await digestRelease(source.root, source.entries))
    const stored = await storeRelease(statePaths(scratch()), source)
    expect(stored.digest).toBe(digest)
    expect(path.basename(stored.dir)).toBe(digest)
    expect(stored.release.entries).toEqual(await walkRelease(stored.dir))
    expect(fs.statSync(path.join(stored.dir, 'bin/cli.js')).mode & 0o777).toBe(0o555)
    expect(fs.statSync(path.join(stored.dir, 'lib/data.json')).mode & 0o777).toBe(0o444)
    expect(fs.statSync(path.join(stored.dir, 'lib')).mode & 0o777).toBe(0o555)
    expect(fs.readlinkSync(path.join(stored.dir, 'lib/link.json'))).toBe('data.json')
  })

  it('storing again keeps an intact release, and replaces one whose files were changed', async () => {
    const source = await loadRelease(release())
    const paths = statePaths(scratch())
    const first = await storeRelease(paths, source)
    const inode = () => fs.statSync(first.dir).ino
    const kept = inode()
    expect((await storeRelease(paths, source)).dir).toBe(first.dir)
    expect(inode()).toBe(kept)
    // damaged in place: what would run is no longer what the digest names
    const data = path.join(first.dir, 'lib/data.json')
    fs.chmodSync(path.join(first.dir, 'lib'), 0o755)
    fs.chmodSync(data, 0o644)
    fs.writeFileSync(data, '{"a":2}')
    const again = await storeRelease(paths, source)
    expect(again.digest).toBe(first.digest)
    expect(inode()).not.toBe(kept)
    expect(fs.readFileSync(data, 'utf8')).toBe('{"a":1}')
    expect(fs.statSync(data).mode & 0o777).toBe(0o444)
    expect(fs.readdirSync(paths.releasesDir('stored'))).toEqual([first.digest])
  })

  it('a file swapped for a symlink after the walk is refused, not copied through', async () => {
    const dir = release()
    const source = await loadRelease(dir)
    const outside = path.join(scratch(), 'secret.txt')
    fs.writeFileSync(outside, 'not part of the release')
    fs.rmSync(path.join(dir, 'lib/data.json'))
    fs.symlinkSync(outside, path.join(dir, 'lib/data.json'))
    await expect(copyAndDigest(source.root, path.join(scratch(), 'copy'), source.entries)).rejects.toMatchObject({
      code: 'MANIFEST_INVALID',
      message: 'lib/data.json changed while the release was copied: it is a symlink now',
    })
  })
})

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { writeFileAtomic } from '../../src/runtime/fs/atomic-write.js'
import { withLock } from '../../src/runtime/fs/lock.js'
import { statePaths } from '../../src/runtime/paths.js'
import { readInstalled, updateState } from '../../src/runtime/store/state-files.js'

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-unit-'))

it('atomic writes are 0600 and leave no temp files behind', async () => {
  const dir = tmp()
  const file = path.join(dir, 'sub', 'doc.json')
  await writeFileAtomic(file, 'one')
  await writeFileAtomic(file, 'two')
  expect(fs.readFileSync(file, 'utf8')).toBe('two')
  expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
  expect(fs.readdirSync(path.dirname(file))).toEqual(['doc.json'])
})

it('concurrent read-modify-write under the state lock loses no update', async () => {
  const paths = statePaths(tmp())
  await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      updateState(paths, async ({ installed }) => {
        installed.connectors[`c${i}`] = {
          key: `c${i}`,
          name: 'n',
          version: '1',
          digest: 'a'.repeat(64),
          installedAt: 'now',
        }
        return { result: undefined, installedChanged: true }
      }),
    ),
  )
  expect(Object.keys((await readInstalled(paths)).connectors)).toHaveLength(40)
})

it('the lock is exclusive', async () => {
  const target = path.join(tmp(), 'x')
  let inside = 0
  let max = 0
  await Promise.all(
    Array.from({ length: 10 }, () =>
      withLock(target, async () => {
        inside++
        max = Math.max(max, inside)
        // holds the lock across a turn of the event loop, so the other nine really contend for it (no wait for
        // anything)
        await new Promise((r) => setTimeout(r, 5))
        inside--
      }),
    ),
  )
  expect(max).toBe(1)
})

it('a corrupt state file is a clear error, not silently replaced', async () => {
  const paths = statePaths(tmp())
  fs.writeFileSync(paths.installedJson, '{ nope')
  await expect(readInstalled(paths)).rejects.toThrow(/installed\.json is not valid JSON/)
  await expect(updateState(paths, async () => ({ result: 1, installedChanged: true }))).rejects.toThrow(
    /not valid JSON/,
  )
  expect(fs.readFileSync(paths.installedJson, 'utf8')).toBe('{ nope')
})

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { holdLock, withLock } from '../../src/runtime/fs/lock.js'

it('lock directories are 0700 even under umask 000', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lock-'))
  const previous = process.umask(0)
  try {
    const target = path.join(dir, 'new/nested/state')
    const seen = await withLock(target, async () => fs.statSync(`${target}.lock`).mode & 0o777)
    expect(seen.toString(8)).toBe('700')
    expect((fs.statSync(path.join(dir, 'new')).mode & 0o777).toString(8)).toBe('700')
    const release = await holdLock(path.join(dir, 'daemon'), (err) => {
      throw err
    })
    expect((fs.statSync(path.join(dir, 'daemon.lock')).mode & 0o777).toString(8)).toBe('700')
    await release()
  } finally {
    process.umask(previous)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { withLock } from '../../src/runtime/fs/lock.js'

it('a lock taken over while the operation holds it aborts the operation: LOCK_COMPROMISED, and the work sees its signal', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lock-'))
  const target = path.join(dir, 'state')
  let sawAbort = false
  const run = withLock(target, async (held) => {
    // another process "breaking" the lock: proper-lockfile notices at its next refresh
    fs.rmSync(`${target}.lock`, { recursive: true, force: true })
    await new Promise<void>((resolve) => held.addEventListener('abort', () => resolve(), { once: true }))
    sawAbort = held.aborted
    return 'written anyway?'
  })
  await expect(run).rejects.toMatchObject({ code: 'LOCK_COMPROMISED', message: expect.stringContaining('was taken over') })
  expect(sawAbort).toBe(true)
  fs.rmSync(dir, { recursive: true, force: true })
})

it('an uncontended lock runs the work and releases the lock', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lock-'))
  const target = path.join(dir, 'state')
  expect(await withLock(target, async (held) => (held.aborted ? 'no' : 'yes'))).toBe('yes')
  expect(fs.existsSync(`${target}.lock`)).toBe(false)
  fs.rmSync(dir, { recursive: true, force: true })
})

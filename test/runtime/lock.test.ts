import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { breakLockOfGoneHolder, holdLock, LOCK_OWNER_FILE, withLock } from '../../src/runtime/fs/lock.js'
import { isAlive, processStartTicks, thisProcess } from '../../src/runtime/proc/pid.js'
import { until } from '../support/eventually.js'
import { lockOfKilledHolder } from '../support/orphaned-lock.js'

it(
  'a lock taken over while the operation holds it aborts the operation: ' +
    'LOCK_COMPROMISED, and the work sees its signal',
  async () => {
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
    await expect(run).rejects.toMatchObject({
      code: 'LOCK_COMPROMISED',
      message: expect.stringContaining('was taken over'),
    })
    expect(sawAbort).toBe(true)
    fs.rmSync(dir, { recursive: true, force: true })
  },
)

it('an uncontended lock runs the work and releases the lock', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lock-'))
  const target = path.join(dir, 'state')
  expect(await withLock(target, async (held) => (held.aborted ? 'no' : 'yes'))).toBe('yes')
  expect(fs.existsSync(`${target}.lock`)).toBe(false)
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('owner records: a lock whose holder is proven gone is taken at once, any other waits', () => {
  const lockTarget = (): { dir: string; target: string; lockDir: string } => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lock-'))
    const target = path.join(dir, 'daemon')
    return { dir, target, lockDir: `${target}.lock` }
  }
  const writeOwner = (lockDir: string, record: object): void => {
    fs.mkdirSync(lockDir, { mode: 0o700 })
    fs.writeFileSync(path.join(lockDir, LOCK_OWNER_FILE), JSON.stringify(record), { mode: 0o600 })
  }

  it(
    'a held lock records its holder (pid, start time, pid namespace) in a 0600 file; ' +
      'release removes the lock with it',
    async () => {
      const { dir, target, lockDir } = lockTarget()
      const release = await holdLock(target, (err) => {
        throw err
      })
      const owner = path.join(lockDir, LOCK_OWNER_FILE)
      expect(JSON.parse(fs.readFileSync(owner, 'utf8'))).toEqual(thisProcess())
      expect(thisProcess()).toMatchObject({ pid: process.pid, startTicks: processStartTicks(process.pid) })
      expect(fs.statSync(owner).mode & 0o777).toBe(0o600)
      expect(await breakLockOfGoneHolder(target)).toMatchObject({ state: 'held' })
      await release()
      expect(fs.existsSync(lockDir)).toBe(false)
      expect(await breakLockOfGoneHolder(target)).toEqual({ state: 'free' })
      fs.rmSync(dir, { recursive: true, force: true })
    },
  )

  it('the lock of a holder killed with -9 is broken at once, and can then be taken', async () => {
    const { dir, target, lockDir } = lockTarget()
    const pid = await lockOfKilledHolder(target)
    expect(fs.existsSync(lockDir)).toBe(true)
    await expect(holdLock(target, () => undefined)).rejects.toMatchObject({ code: 'ELOCKED' })
    expect(await breakLockOfGoneHolder(target)).toEqual({ state: 'broken', holder: expect.objectContaining({ pid }) })
    expect(fs.readdirSync(dir)).toEqual([])
    const release = await holdLock(target, () => undefined)
    await release()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it(
    'a record whose pid now names another live process ' +
      '(its start time differs) is broken, and that process is left alone',
    async () => {
      const { dir, target, lockDir } = lockTarget()
      const bystander = spawn('sleep', ['600'], { stdio: 'ignore' })
      try {
        expect(await until(() => processStartTicks(bystander.pid!) !== undefined)).toBe(true)
        writeOwner(lockDir, { ...thisProcess(), pid: bystander.pid, startTicks: '1' })
        expect(await breakLockOfGoneHolder(target)).toMatchObject({ state: 'broken', holder: { pid: bystander.pid } })
        expect(fs.existsSync(lockDir)).toBe(false)
        expect(isAlive(bystander.pid!)).toBe(true)
        expect(bystander.signalCode).toBeNull()
      } finally {
        bystander.kill('SIGKILL')
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
  )

  it(
    'unproven locks stay: no record (an older tutti, or a lock being made), an unreadable one, a live holder, ' +
      'another pid namespace',
    async () => {
      const dead = spawn('true', { stdio: 'ignore' })
      await new Promise((resolve) => dead.once('exit', resolve))
      const cases: Array<[string, (lockDir: string) => void]> = [
        ['no record', (lockDir) => fs.mkdirSync(lockDir)],
        [
          'a cut-off record',
          (lockDir) => {
            fs.mkdirSync(lockDir)
            fs.writeFileSync(path.join(lockDir, LOCK_OWNER_FILE), '{"pid":')
          },
        ],
        ['a live holder', (lockDir) => writeOwner(lockDir, thisProcess())],
        [
          'a dead pid of another pid namespace',
          (lockDir) => writeOwner(lockDir, { pid: dead.pid, pidNamespace: 'pid:[1]' }),
        ],
      ]
      for (const [label, arrange] of cases) {
        const { dir, target, lockDir } = lockTarget()
        arrange(lockDir)
        expect(await breakLockOfGoneHolder(target), label).toMatchObject({ state: 'held' })
        expect(fs.existsSync(lockDir), label).toBe(true)
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
  )
})

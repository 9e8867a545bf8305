import fs from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { until } from './eventually.js'
import { control, isAlive } from './tutti.js'

/**
 * The daemon of `dir`, proven as daemon-identity.ts proves it (health repeats daemon.json's pid and nonce, /proc's
 * start time), then killed with SIGKILL; resolves with its pid once it is gone.
 */
export async function killDaemonProven(dir: string): Promise<number> {
  const info = JSON.parse(fs.readFileSync(path.join(dir, 'daemon.json'), 'utf8'))
  const health = await control(dir, 'health')
  const stat = fs.readFileSync(`/proc/${info.pid}/stat`, 'utf8')
  const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  expect({ pid: health.pid, nonce: health.nonce, processStart: health.processStart }).toEqual({
    pid: info.pid,
    nonce: info.nonce,
    processStart: startTicks,
  })
  process.kill(info.pid, 'SIGKILL')
  expect(await until(() => !isAlive(info.pid))).toBe(true)
  return info.pid
}

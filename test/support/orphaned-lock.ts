import { spawn } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO } from './tutti.js'

/**
 * What a process killed with -9 while holding a lock leaves: a fresh
 * `<target>.lock` with its owner record. The holder is a real process that
 * takes the lock through the built lock module (dist/), then is killed; the
 * promise resolves with its pid once it is gone.
 */
export async function lockOfKilledHolder(target: string): Promise<number> {
  const lockModule = pathToFileURL(path.join(REPO, 'dist/runtime/fs/lock.js')).href
  const script =
    `const { holdLock } = await import(${JSON.stringify(lockModule)}); ` +
    `await holdLock(${JSON.stringify(target)}, () => {}); process.stdout.write('held\\n'); ` +
    `setInterval(() => {}, 60_000)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${code}) before it held the lock`)))
  })
  child.kill('SIGKILL')
  await exited
  return child.pid!
}

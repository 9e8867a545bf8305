import type { ChildProcess } from 'node:child_process'

/** The port a fixture prints as `listening <port>` on stdout; rejects if it exits first. */
export function listeningPort(child: ChildProcess, what: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /listening (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it listened`)))
  })
}

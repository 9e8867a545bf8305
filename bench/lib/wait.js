// Bounded waiting: every loop here has a deadline.
import net from 'node:net'

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Run `fn` with a deadline; rejects with `what timed out after Nms`.
 * @template T
 * @param {string} what
 * @param {number} ms
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withTimeout(what, ms, fn) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([fn(), timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Poll `check` every `intervalMs` until it returns a truthy value or `ms`
 * pass. `abort()` returning a string stops early with that reason (e.g. the
 * process exited).
 * @template T
 * @param {string} what
 * @param {number} ms
 * @param {() => Promise<T | undefined | false> | T | undefined | false} check
 * @param {{ intervalMs?: number, abort?: () => string | undefined }} [opts]
 * @returns {Promise<T>}
 */
export async function pollUntil(what, ms, check, { intervalMs = 100, abort } = {}) {
  const deadline = Date.now() + ms
  let last = ''
  while (Date.now() < deadline) {
    const why = abort?.()
    if (why) throw new Error(`${what}: ${why}`)
    try {
      const value = await check()
      if (value) return value
    } catch (err) {
      last = err instanceof Error ? err.message : String(err)
    }
    await sleep(intervalMs)
  }
  throw new Error(`${what}: not ready after ${ms} ms${last ? ` (last error: ${last})` : ''}`)
}

/** Resolve true when a TCP connection to 127.0.0.1:port succeeds. @param {number} port */
export function tcpOpen(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port })
    sock.once('connect', () => {
      sock.destroy()
      resolve(true)
    })
    sock.once('error', () => resolve(false))
  })
}

/** A port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

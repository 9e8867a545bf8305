// Preloaded (`node --import <this file>`) into every peer process the
// benchmark starts, so the run never touches anything but 127.0.0.1:
//
// - every TCP `listen` is bound to 127.0.0.1 (mcp-hub and supergateway have
//   no host option and would otherwise listen on all interfaces);
// - every outbound TCP connection to a non-loopback host fails at once
//   (mcp-hub fetches a marketplace catalogue at start-up; the benchmark seeds
//   its cache so it does not try, and this makes sure).
//
// Unix-socket and pipe traffic is left alone.
import net from 'node:net'

const BIND = '127.0.0.1'
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '::ffff:127.0.0.1', '[::1]'])

/** @param {unknown} v */
const isPort = (v) => typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))

// Node's overloads, as one: the arguments are passed on as they came
const listen = /** @type {(this: net.Server, ...args: any[]) => net.Server} */ (net.Server.prototype.listen)
/** @this {net.Server} @param {any[]} args */
net.Server.prototype.listen = function guardedListen(...args) {
  const first = args[0]
  if (args.length === 0 || typeof first === 'function') {
    args.unshift(0, BIND)
  } else if (isPort(first)) {
    if (typeof args[1] === 'string') args[1] = BIND
    else args.splice(1, 0, BIND)
  } else if (
    first &&
    typeof first === 'object' &&
    !('path' in first) &&
    !('fd' in first) &&
    !('handle' in first) &&
    !('_handle' in first)
  ) {
    args[0] = { ...first, host: BIND }
  }
  return listen.apply(this, args)
}

/** @param {any[]} args */
function targetHost(args) {
  let opts = args[0]
  if (Array.isArray(opts)) opts = opts[0] // net.connect() passes normalized [options, cb]
  if (opts && typeof opts === 'object') {
    if (opts.path) return undefined
    return opts.host ?? 'localhost'
  }
  if (isPort(opts)) return typeof args[1] === 'string' ? args[1] : 'localhost'
  return undefined // a path string: IPC
}

const connect = /** @type {(this: net.Socket, ...args: any[]) => net.Socket} */ (net.Socket.prototype.connect)
/** @this {net.Socket} @param {any[]} args */
net.Socket.prototype.connect = function guardedConnect(...args) {
  const host = targetHost(args)
  if (host !== undefined && !LOOPBACK.has(String(host).toLowerCase())) {
    const err = Object.assign(
      new Error(`tutti-bench net guard: outbound connection to ${host} blocked (only 127.0.0.1 allowed)`),
      { code: 'ECONNREFUSED' },
    )
    process.stderr.write(`${err.message}\n`)
    process.nextTick(() => this.destroy(err))
    return this
  }
  return connect.apply(this, args)
}

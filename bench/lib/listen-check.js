// Which TCP addresses a process listens on (Linux /proc), so the benchmark can
// refuse a peer that listens on anything but loopback.
import fs from 'node:fs'

/** @param {number} pid */
function socketInodes(pid) {
  const inodes = new Set()
  let fds = []
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`)
  } catch {
    return inodes
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m) inodes.add(m[1])
    } catch {
      // closed meanwhile
    }
  }
  return inodes
}

/** @param {string} hexAddr  as in /proc/net/tcp: `0100007F:1F90` */
function decode(hexAddr) {
  const [ip, port] = hexAddr.split(':')
  const p = parseInt(port, 16)
  if (ip.length === 8) {
    const b = /** @type {RegExpMatchArray} */ (ip.match(/../g)).map((h) => parseInt(h, 16)).reverse()
    return { host: b.join('.'), port: p, loopback: b[0] === 127 }
  }
  const loopback = ip === '00000000000000000000000001000000' || /^0000000000000000FFFF0000..00007F$/i.test(ip)
  return { host: loopback ? '::1/::ffff:127.x' : `[${ip}]`, port: p, loopback }
}

/**
 * Listening TCP sockets of `pid`.
 * @param {number} pid
 * @returns {{ host: string, port: number, loopback: boolean }[]}
 */
export function listeningAddresses(pid) {
  const inodes = socketInodes(pid)
  const out = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = ''
    try {
      text = fs.readFileSync(table, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length < 10 || cols[3] !== '0A') continue // 0A = LISTEN
      if (inodes.has(cols[9])) out.push(decode(cols[1]))
    }
  }
  return out
}

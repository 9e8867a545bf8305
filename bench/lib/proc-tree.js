// Reading processes from /proc: resident memory and the descendants of a pid
// (a daemon's upstreams lead their own process groups but stay its children).
import fs from 'node:fs'

/** VmRSS of a process in KiB (0 when it is gone). @param {number} pid */
export function rssKb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

/** Every live (not zombie) descendant of `pid`, children first. @param {number} pid */
export function descendants(pid) {
  /** @type {Map<number, number[]>} */
  const kids = new Map()
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const text = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
      if (rest[0] === 'Z') continue
      const ppid = Number(rest[1])
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(entry)])
    } catch {
      // gone between the listing and the read
    }
  }
  const out = []
  const queue = [...(kids.get(pid) ?? [])]
  while (queue.length) {
    const p = /** @type {number} */ (queue.shift())
    out.push(p)
    queue.push(...(kids.get(p) ?? []))
  }
  return out
}

/** Proportional set size in KiB (smaps_rollup; undefined where the kernel has none). @param {number} pid */
export function pssKb(pid) {
  try {
    const m = /^Pss:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))
    return m ? Number(m[1]) : undefined
  } catch {
    return undefined
  }
}

/** The command line of a process, words joined by spaces ('' when it is gone). @param {number} pid */
export function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return ''
  }
}

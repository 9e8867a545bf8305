import fs from 'node:fs'
import path from 'node:path'

/**
 * Upstream process groups recorded in the state dir, so that the daemon
 * after a `kill -9` can reap what its predecessor left running (servers
 * that ignore stdin EOF, grandchildren). A group member is only signalled
 * when it proves it is ours: its environment carries the marker of the
 * daemon that started it, and it is in the recorded group.
 */
export const UPSTREAM_MARKER_VAR = 'TUTTI_UPSTREAM_OF'

interface GroupRecord {
  pgid: number
  marker: string
}

export class GroupRecords {
  constructor(
    private readonly dir: string,
    /** Unique per daemon: what its upstreams carry in UPSTREAM_MARKER_VAR. */
    readonly marker: string,
  ) {}

  add(pgid: number): void {
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 })
      fs.writeFileSync(
        path.join(this.dir, `${pgid}.json`),
        JSON.stringify({ pgid, marker: this.marker } satisfies GroupRecord),
        { mode: 0o600 },
      )
    } catch {
      // without a record the group is still stopped normally; only a kill -9 would leak it
    }
  }

  remove(pgid: number): void {
    fs.rmSync(path.join(this.dir, `${pgid}.json`), { force: true })
  }

  /** Kill the proven members of every recorded group, then forget the records. Returns the pids killed. */
  reap(): number[] {
    const killed: number[] = []
    let names: string[]
    try {
      names = fs.readdirSync(this.dir)
    } catch {
      // no records dir: no group to reap
      return killed
    }
    const records: GroupRecord[] = []
    for (const name of names) {
      try {
        const r = JSON.parse(fs.readFileSync(path.join(this.dir, name), 'utf8')) as GroupRecord
        if (Number.isInteger(r.pgid) && typeof r.marker === 'string' && r.marker.length >= 16) records.push(r)
      } catch {
        // an unreadable record proves nothing
      }
      fs.rmSync(path.join(this.dir, name), { force: true })
    }
    if (!records.length || process.platform !== 'linux') return killed
    const wanted = new Map(records.map((r) => [r.pgid, `${UPSTREAM_MARKER_VAR}=${r.marker}`]))
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      const pid = Number(entry)
      const member = groupOf(pid)
      const marker = member === undefined ? undefined : wanted.get(member)
      if (!marker || !environOf(pid).includes(marker)) continue
      try {
        process.kill(pid, 'SIGKILL')
        killed.push(pid)
      } catch {
        // gone meanwhile
      }
    }
    return killed
  }
}

function groupOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
  } catch {
    // the process is gone (or there is no /proc): no group to name
    return undefined
  }
}

function environOf(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
  } catch {
    // the process is gone, or its environ is not ours to read: nothing proves it ours
    return []
  }
}

// CPU time of a process, in ms. Preferably the sum of its threads'
// /proc/<pid>/task/*/schedstat (nanoseconds on CPU): the floor spends well
// under 0.1 ms per call, and /proc/<pid>/stat's 10 ms ticks would make a
// 3,000-call run's figure ±10 %. Node's threads (main, libuv pool, V8
// helpers) live as long as the process, so no thread's time is lost between
// two reads. Falls back to utime + stime from /proc/<pid>/stat.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'

/** @type {number | undefined} */
let ticks
function clockTicks() {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2000 }).trim()) || 100
    } catch {
      ticks = 100
    }
  }
  return ticks
}

/** @param {number} pid */
function schedstatMs(pid) {
  let ns = 0
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns / 1e6
}

/** @param {number} pid */
function statMs(pid) {
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks()
}

const HAS_SCHEDSTAT = fs.existsSync('/proc/self/schedstat')

/**
 * @param {number} pid
 * @returns {number | undefined}  CPU ms so far (ns resolution with schedstat, else 1 tick); undefined once it is gone
 */
export function processCpuMs(pid) {
  try {
    return HAS_SCHEDSTAT ? schedstatMs(pid) : statMs(pid)
  } catch {
    return undefined
  }
}

/** Which source processCpuMs reads, for the report. */
export const CPU_SOURCE = HAS_SCHEDSTAT ? 'schedstat (ns, all threads)' : '/proc/<pid>/stat (ticks)'

// CPU time of a process, from /proc/<pid>/stat (utime + stime), in ms.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'

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

/**
 * @param {number} pid
 * @returns {number | undefined}  user + system CPU ms so far (resolution 1 tick, usually 10 ms)
 */
export function processCpuMs(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks()
  } catch {
    return undefined
  }
}

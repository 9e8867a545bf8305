/** The property lines node prints after an uncaught error (`code: 'MODULE_NOT_FOUND',`): noise in a one-line reason. */
const NODE_ERROR_FIELD = /^(code|requireStack|errno|syscall|path|dest|cause|url):/

/** node's `file:line` heading of an uncaught error: it and the source line after it say nothing to a user. */
const SOURCE_LOCATION = /^(node:|file:\/\/|\/)\S*:\d+$/

/**
 * The informative lines of a crash: no source excerpt, no stack frames, no
 * runtime banner, no property dump of the error.
 */
export function stderrSummary(tail: string): string {
  const lines: string[] = []
  let skipNext = false
  for (const raw of tail.split('\n')) {
    const l = raw.trim()
    if (skipNext) {
      skipNext = false
      continue
    }
    if (SOURCE_LOCATION.test(l)) {
      skipNext = true
      continue
    }
    if (
      l.length > 2 &&
      !l.startsWith('at ') &&
      !/^Node\.js v/.test(l) &&
      !/^[\^~\s{}[\]]+$/.test(l) &&
      !NODE_ERROR_FIELD.test(l)
    )
      lines.push(l)
  }
  return lines.length ? `; stderr: ${lines.slice(-3).join(' | ')}` : ''
}

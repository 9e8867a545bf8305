import type { DryRunOutcome } from '../runtime/install/connector-installer.js'

/** `install --dry-run`: which packages have install scripts, and whether they would run. */
export function installScriptLines(found: DryRunOutcome['installScripts']): string[] {
  const lines: string[] = []
  if (found.unresolved) lines.push(`install scripts: unknown (${found.unresolved})`)
  if (!found.packages.length) return found.unresolved ? lines : ['install scripts: none']
  const named = found.packages.map((p) => {
    const what = p.name === '.' ? 'the package itself' : p.name
    return p.scripts.length ? `${what} (${p.scripts.join(', ')})` : what
  })
  const run = found.run ? 'they would run (--allow-scripts)' : 'they would not run without --allow-scripts'
  lines.push(`install scripts: ${named.join(', ')}; ${run}`)
  return lines
}

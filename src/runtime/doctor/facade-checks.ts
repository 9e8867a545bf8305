import type { DoctorConnector, DoctorTool } from '../control-protocol/doctor.js'
import type { AvailableResult } from '../control-protocol/available.js'
import { shimCommand } from '../names.js'
import { RECONCILE_FIX, type Finding } from './finding.js'

/**
 * Pure comparisons of each facade with the registry (seed 004,
 * facade-parity). Inputs are observations; outputs are findings.
 */
const stable = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(stable).join(',')}]`
    : v && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v)

/**
 * Connectors that are installed but cannot be used: the facades agree about
 * them, and yet the user has a problem to fix.
 */
export function checkHealth(connectors: readonly DoctorConnector[]): Finding[] {
  const out: Finding[] = []
  for (const c of connectors) {
    const reason = c.reason ? `: ${c.reason}` : ''
    if (c.status === 'needs-auth') {
      // the reason names the command that helps (an OAuth sign-in takes no --env)
      const named = c.reason ? /\((tutti connector connect [^)]+)\)/.exec(c.reason)?.[1] : undefined
      const fix = named
        ? `run \`${named}\``
        : `store its credentials: \`tutti connector connect ${c.key} --env NAME=VALUE\` (or --from-env NAME)`
      out.push({ check: 'health', connector: c.key, problem: `needs-auth${reason}`, fix })
    } else if (c.status === 'failed' || (c.status === 'starting' && c.reason && c.reason !== 'starting')) {
      out.push({
        check: 'health',
        connector: c.key,
        problem: `${c.status}${reason}`,
        fix:
          `fix the cause, then retry with \`tutti connector connect ${c.key}\` (it resolves the command again); ` +
          `details in \`tutti daemon status\` and daemon.log`,
      })
    }
  }
  return out
}

export function checkAvailable(
  available: AvailableResult,
  connectors: readonly DoctorConnector[],
  tools: readonly DoctorTool[],
): Finding[] {
  const out: Finding[] = []
  const routed = new Set(tools.map((t) => t.connector))
  const byKey = new Map(connectors.map((c) => [c.key, c]))
  const listed = new Set(available.connectors.map((c) => c.key))
  for (const c of available.connectors) {
    const mcp = c.interfaces.find((i) => i.kind === 'mcp')
    const known = byKey.get(c.key)
    if (!known)
      out.push({
        check: 'available',
        connector: c.key,
        problem: 'listed by `connector available` but not tracked by the daemon',
        fix: RECONCILE_FIX,
      })
    if (mcp && mcp.toolPrefix !== `${c.key}_`)
      out.push({
        check: 'available',
        connector: c.key,
        problem: `toolPrefix is "${mcp.toolPrefix}", not "${c.key}_"`,
        fix: RECONCILE_FIX,
      })
    if (mcp?.status === 'ready' && known?.active && known.generation === 0) {
      out.push({
        check: 'available',
        connector: c.key,
        problem: 'reported ready but no route generation is committed',
        fix: RECONCILE_FIX,
      })
    }
  }
  for (const key of routed) {
    if (!listed.has(key))
      out.push({
        check: 'available',
        connector: key,
        problem: 'the registry serves its tools but `connector available` does not list it',
        fix: RECONCILE_FIX,
      })
    const known = byKey.get(key)
    if (known && !known.active)
      out.push({
        check: 'available',
        connector: key,
        problem: `tools are routed while the connector is ${known.status}`,
        fix: RECONCILE_FIX,
      })
  }
  for (const t of tools) {
    if (!t.localName.startsWith(`${t.connector}_`))
      out.push({
        check: 'available',
        connector: t.connector,
        problem: `tool "${t.localName}" does not carry the prefix ${t.connector}_`,
        fix: RECONCILE_FIX,
      })
  }
  return out
}

export interface ListedTool {
  name: string
  inputSchema?: unknown
  description?: string
}

/** One protocol era's `tools/list` against the registry: the same names, descriptions and schemas. */
export function checkMcpList(
  check: Finding['check'],
  listed: readonly ListedTool[] | { error: string },
  tools: readonly DoctorTool[],
): Finding[] {
  if ('error' in listed)
    return [
      {
        check,
        problem: `tools/list failed: ${listed.error}`,
        fix: 'check `tutti daemon status` and daemon.log; restart with `tutti daemon stop && tutti daemon start`',
      },
    ]
  const out: Finding[] = []
  const expected = new Map(tools.map((t) => [t.localName, t]))
  const seen = new Map(listed.map((t) => [t.name, t]))
  for (const t of tools) {
    const got = seen.get(t.localName)
    if (!got)
      out.push({
        check,
        connector: t.connector,
        problem: `tool "${t.localName}" is in the registry but not in tools/list`,
        fix: RECONCILE_FIX,
      })
    else if (stable(got.inputSchema) !== stable(t.inputSchema))
      out.push({
        check,
        connector: t.connector,
        problem: `tool "${t.localName}": tools/list schema differs from the registry`,
        fix: RECONCILE_FIX,
      })
    else if ((got.description ?? undefined) !== t.description)
      out.push({
        check,
        connector: t.connector,
        problem: `tool "${t.localName}": tools/list description differs from the registry`,
        fix: RECONCILE_FIX,
      })
  }
  for (const name of seen.keys())
    if (!expected.has(name))
      out.push({ check, problem: `tools/list has "${name}", which the registry does not route`, fix: RECONCILE_FIX })
  return out
}

export interface ShimOnDisk {
  key: string
  files: string[]
  generation?: number
  /** The release digest the shim's launch target pins, if readable. */
  pinnedDigest?: string
  path: string
}

export function checkShims(connectors: readonly DoctorConnector[], onDisk: readonly ShimOnDisk[]): Finding[] {
  const out: Finding[] = []
  const disk = new Map(onDisk.map((s) => [s.key, s]))
  for (const c of connectors) {
    if (!c.active || !c.hasCli || c.status !== 'ready') continue
    const s = disk.get(c.key)
    if (!s?.files.includes(shimCommand(c.key))) {
      out.push({
        check: 'shims',
        connector: c.key,
        problem: `${shimCommand(c.key)} is missing from the bin dir`,
        fix: RECONCILE_FIX,
      })
      continue
    }
    const missing = ['', '.cmd', '.ps1'].filter((suffix) => !s.files.includes(`${shimCommand(c.key)}${suffix}`))
    if (missing.length)
      out.push({
        check: 'shims',
        connector: c.key,
        problem: `${shimCommand(c.key)} lacks ${missing.map((m) => m || '(POSIX)').join(', ')}`,
        fix: RECONCILE_FIX,
      })
    if (s.generation !== c.shimGeneration)
      out.push({
        check: 'shims',
        connector: c.key,
        problem: `the shim runs generation ${s.generation ?? '?'}, not ${c.shimGeneration}`,
        fix: RECONCILE_FIX,
      })
    else if (s.pinnedDigest !== c.digest)
      out.push({
        check: 'shims',
        connector: c.key,
        problem: 'the shim pins another release than the installed one',
        fix: RECONCILE_FIX,
      })
  }
  const active = new Set(connectors.filter((c) => c.active && c.hasCli).map((c) => c.key))
  for (const s of onDisk) {
    if (!active.has(s.key))
      out.push({
        check: 'shims',
        connector: s.key,
        problem: `stray shim ${s.path}: no active connector "${s.key}" with a CLI`,
        fix: `${RECONCILE_FIX}, or delete ${s.path}`,
      })
  }
  return out
}

export interface SkillRootObservation {
  connector: string
  dir: string
  exists: boolean
  /** Skill names that parse, and the problems of the ones that do not. */
  valid: string[]
  problems: string[]
}

export function checkSkills(connectors: readonly DoctorConnector[], roots: readonly SkillRootObservation[]): Finding[] {
  const out: Finding[] = []
  const byKey = new Map(roots.map((r) => [r.connector, r]))
  for (const c of connectors) {
    if (!c.active || !c.skillsDir || c.skills.length === 0) continue
    const fix = `reinstall the connector from its source (\`tutti connector install <dir>\` repairs a damaged release)`
    const r = byKey.get(c.key)
    if (!r?.exists) {
      out.push({ check: 'skills', connector: c.key, problem: `the Skill root ${c.skillsDir} does not exist`, fix })
      continue
    }
    for (const p of r.problems) out.push({ check: 'skills', connector: c.key, problem: p, fix })
    const missing = c.skills.filter((name) => !r.valid.includes(name))
    if (missing.length && !r.problems.length)
      out.push({
        check: 'skills',
        connector: c.key,
        problem: `Skills ${missing.join(', ')} are no longer in ${r.dir}`,
        fix,
      })
  }
  return out
}

export function checkDeclared(connectors: readonly DoctorConnector[]): Finding[] {
  const out: Finding[] = []
  for (const c of connectors) {
    const diffs = c.declaredCheck?.differences ?? []
    if (!diffs.length) continue
    const detail = diffs.map((d) => `${d.tool} (${d.problem}${d.fields ? `: ${d.fields.join(', ')}` : ''})`).join('; ')
    out.push({
      check: 'declared-tools',
      connector: c.key,
      problem:
        `the manifest's mcp.tools disagrees with the running upstream: ${detail}; ` + `the route follows the upstream`,
      fix: `update mcp.tools in ${c.key}'s tutti-connector.json to the upstream's tools/list, then reinstall it`,
    })
  }
  return out
}

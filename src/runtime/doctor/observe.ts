import fs from 'node:fs/promises'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { LEGACY_REVISION, MODERN_REVISION } from '../mcp-wire.js'
import { shimCommand } from '../names.js'
import { readSkills } from '../skills/skill-file.js'
import type { DoctorConnector } from '../control-protocol/doctor.js'
import type { MCPServerBinding } from '../sessions/prepared-runtime.js'
import type { StatePaths } from '../paths.js'
import { readShimGeneration } from '../shims/shim-on-disk.js'
import { pinnedDigest, shimTargetPath } from '../shims/shim-target.js'
import type { ListedTool, ShimOnDisk, SkillRootObservation } from './facade-checks.js'

/** What each facade looks like from outside the daemon. */

export async function listToolsInEra(
  server: MCPServerBinding,
  era: 'modern' | 'legacy',
): Promise<ListedTool[] | { error: string }> {
  const client = new Client(
    { name: 'tutti-doctor', version: '1' },
    era === 'modern'
      ? { versionNegotiation: { mode: { pin: MODERN_REVISION } } }
      : { supportedProtocolVersions: [LEGACY_REVISION] },
  )
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
    )
    const { tools } = await client.listTools()
    return tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema, description: t.description }))
  } catch (err) {
    // the failure is the doctor's finding, reported in the result
    return { error: (err as Error).message }
  } finally {
    // the listing is what the doctor reports; a failure to close its own short-lived client is not a finding
    await client.close().catch(() => undefined)
  }
}

export async function observeShims(paths: StatePaths): Promise<ShimOnDisk[]> {
  const binDir = paths.binDir
  // no bin dir yet: no shims to observe
  const files = await fs.readdir(binDir).catch(() => [] as string[])
  const keys = new Set(
    files.map((f) => /^tutti-connector-([a-z][a-z0-9-]*?)(\.cmd|\.ps1)?$/.exec(f)?.[1]).filter((k): k is string => !!k),
  )
  const out: ShimOnDisk[] = []
  for (const key of [...keys].sort()) {
    const shimPath = paths.shimPath(key)
    const gen = await readShimGeneration(shimPath)
    const shim: ShimOnDisk = {
      key,
      path: shimPath,
      files: files.filter((f) => f === shimCommand(key) || f.startsWith(`${shimCommand(key)}.`)),
    }
    if (gen !== undefined) {
      shim.generation = gen
      const digest = pinnedDigest(
        // a launch target that cannot be read pins no digest; the shim is reported without one
        await fs.readFile(shimTargetPath(paths, { key, generation: gen }), 'utf8').catch(() => ''),
      )
      if (digest) shim.pinnedDigest = digest
    }
    out.push(shim)
  }
  return out
}

export async function observeSkillRoots(connectors: readonly DoctorConnector[]): Promise<SkillRootObservation[]> {
  const out: SkillRootObservation[] = []
  for (const c of connectors) {
    if (!c.active || !c.skillsDir) continue
    const exists = await fs.stat(c.skillsDir).then(
      (s) => s.isDirectory(),
      () => false,
    )
    const obs: SkillRootObservation = { connector: c.key, dir: c.skillsDir, exists, valid: [], problems: [] }
    if (exists) {
      try {
        obs.valid = (await readSkills(path.dirname(c.skillsDir), c.skillsDir, path.basename(c.skillsDir))).map(
          (s) => s.name,
        )
      } catch (err) {
        // the problem is the doctor's finding, reported in the result
        obs.problems.push((err as Error).message.replace(/^tutti-connector\.json: /, ''))
      }
    }
    out.push(obs)
  }
  return out
}

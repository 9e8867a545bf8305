import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import { readJsonIfExists, writeJsonAtomic } from '../fs/atomic-write.js'

/**
 * How long a stdio server found to speak 2025 MCP only is taken at its word.
 * A stale verdict fails nothing (an upgraded server still answers
 * `initialize`), it only keeps a 2025 link; an upgrade of the connector's
 * own release is another command line, so it is probed at once.
 */
export const LEGACY_VERDICT_MS = 7 * 24 * 60 * 60_000

/** The command line a verdict is about: its working directory names the release. */
export interface ProbedCommand {
  key: string
  command: string
  args: readonly string[]
  cwd: string
}

interface Verdict {
  /** A hash of the command, its arguments and its working directory. */
  command: string
  era: 'legacy'
  at: string
}

/**
 * What the stdio era probe (server/discover, upstream-connect.ts) found
 * out about a connector's server, so that its next starts skip the probe:
 * a server that answered it with an error, exited on it or let it time out
 * speaks 2025 MCP only (the spec asks clients to cache the verdict per
 * server). Kept, since a silent one would cost the probe's bound on every
 * start, and a lazy upstream starts again after each idle stop. A
 * 2026-07-28 server costs one round trip, so that verdict is not kept. One
 * small file per connector, removed with its uninstall.
 */
export class UpstreamEras {
  constructor(private readonly fileOf: (key: string) => string) {}

  async isLegacy(probed: ProbedCommand, now = Date.now()): Promise<boolean> {
    // unreadable or damaged: the probe runs again, which is always right
    const verdict = (await readJsonIfExists(this.fileOf(probed.key)).catch(() => undefined)) as Verdict | undefined
    if (verdict?.era !== 'legacy' || verdict.command !== fingerprint(probed)) return false
    const at = Date.parse(verdict.at)
    return Number.isFinite(at) && now - at < LEGACY_VERDICT_MS && at <= now
  }

  async rememberLegacy(probed: ProbedCommand): Promise<void> {
    const verdict: Verdict = { command: fingerprint(probed), era: 'legacy', at: new Date().toISOString() }
    // not kept: the next start probes again, which costs a round trip and changes nothing else
    await writeJsonAtomic(this.fileOf(probed.key), verdict).catch(() => undefined)
  }

  /** The connector was uninstalled: a reinstall probes afresh. */
  async remove(key: string): Promise<void> {
    await fs.rm(this.fileOf(key), { force: true })
  }
}

function fingerprint({ command, args, cwd }: ProbedCommand): string {
  return createHash('sha256')
    .update(JSON.stringify([command, args, cwd]))
    .digest('base64url')
}

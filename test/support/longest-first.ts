import path from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Runs the longest files first, so that two workers finish together instead
 * of one waiting out a long file started last. vitest orders by the durations
 * it cached from the last run, but a fresh clone (CI) has no cache and would
 * order by file size; there the seconds below decide (each file's time in a
 * fresh clone's `.ci/run` on a quiet 2-core machine, 2026-12-01, files of 3 s or more; only their order matters). A
 * file missing from
 * the table counts as mid-length.
 */
const SECONDS: Record<string, number> = {
  'test/e2e/install-sources.test.ts': 80,
  'test/e2e/conformance-client.test.ts': 105,
  'test/e2e/connector-updates.test.ts': 48,
  'test/e2e/self-contained-releases.test.ts': 42,
  'test/e2e/hardening-releases.test.ts': 42,
  'test/e2e/packaging.test.ts': 40,
  'test/e2e/available-entry.test.ts': 40,
  'test/e2e/session-bridge.test.ts': 34,
  'test/e2e/hardening-daemon.test.ts': 34,
  'test/e2e/install-keys.test.ts': 35,
  'test/e2e/connector-lifecycle.test.ts': 33,
  'test/e2e/serving-generation.test.ts': 38,
  'test/e2e/oauth-connector.test.ts': 32,
  'test/e2e/oauth-discovery.test.ts': 20,
  'test/e2e/daemon-lifecycle.test.ts': 26,
  'test/e2e/round3-daemon-json.test.ts': 25,
  'test/e2e/upstream-faults.test.ts': 24,
  'test/e2e/session-exec.test.ts': 24,
  'test/e2e/users-machine.test.ts': 23,
  'test/e2e/conformance.test.ts': 23,
  'test/e2e/projections.test.ts': 22,
  'test/e2e/mcp-server.test.ts': 22,
  'test/e2e/doctor.test.ts': 22,
  'test/e2e/agents.test.ts': 22,
  'test/e2e/shims.test.ts': 20,
  'test/e2e/readme-agent-steps.test.ts': 20,
  'test/e2e/sessions.test.ts': 19,
  'test/e2e/import-configs.test.ts': 18,
  'test/e2e/exec-wrappers.test.ts': 30,
  'test/e2e/source-fields.test.ts': 22,
  'test/e2e/round3-oauth.test.ts': 36,
  'test/e2e/round3-key-identity.test.ts': 13,
  'test/runtime/lock-owner-daemon.test.ts': 12,
  'test/e2e/connector-logs.test.ts': 15,
  'test/e2e/lazy-by-cache.test.ts': 19,
  'test/e2e/demo.test.ts': 19,
  'test/e2e/lazy.test.ts': 18,
  'test/e2e/install-scripts.test.ts': 18,
  'test/e2e/model-sees-codex.test.ts': 16,
  'test/e2e/hardening-http.test.ts': 16,
  'test/e2e/model-sees-claude.test.ts': 15,
  'test/e2e/acp-agent.test.ts': 14,
  'test/e2e/upstream-kinds.test.ts': 13,
  'test/e2e/round3-bridge-memory.test.ts': 12,
  'test/e2e/skills-over-mcp.test.ts': 11,
  'test/e2e/round3-code-cache.test.ts': 11,
  'test/e2e/control-schemas.test.ts': 11,
  'test/e2e/generic-owner-path.test.ts': 8,
  'test/e2e/restart-race.test.ts': 7,
  'test/e2e/public-surface.test.ts': 7,
  'test/e2e/command-not-found.test.ts': 7,
  'test/e2e/reaper.test.ts': 5,
  'test/e2e/bad-manifests.test.ts': 5,
  'test/runtime/upstream-connection.test.ts': 4,
  'test/e2e/tools-call-paths.test.ts': 4,
  'test/e2e/mcp-guard.test.ts': 4,
  'test/runtime/watch-connectors.test.ts': 3,
}
const UNKNOWN_E2E = 15
const UNKNOWN_UNIT = 2

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const ms = (spec: TestSpecification): number => {
      const rel = path.relative(root, spec.moduleId).split(path.sep).join('/')
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${rel}`)?.duration
      if (cached !== undefined) return cached
      return 1000 * (SECONDS[rel] ?? (rel.startsWith('test/e2e/') ? UNKNOWN_E2E : UNKNOWN_UNIT))
    }
    return [...files].sort((a, b) => ms(b) - ms(a))
  }
}

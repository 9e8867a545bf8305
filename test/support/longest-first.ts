import path from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Runs the longest files first, so that two workers finish together instead
 * of one waiting out a long file started last. vitest orders by the durations
 * it cached from the last run, but a fresh clone (CI) has no cache and would
 * order by file size; there the seconds below decide (one file alone on a
 * 2-core machine, measured; only their order matters). A file missing from
 * the table counts as mid-length.
 */
const SECONDS: Record<string, number> = {
  'test/e2e/hardening-releases.test.ts': 50,
  'test/e2e/conformance.test.ts': 43,
  'test/e2e/self-contained-releases.test.ts': 41,
  'test/e2e/hardening-daemon.test.ts': 40,
  'test/e2e/agents.test.ts': 37,
  'test/e2e/packaging.test.ts': 35,
  'test/e2e/daemon-lifecycle.test.ts': 35,
  'test/e2e/connector-lifecycle.test.ts': 33,
  'test/e2e/projections.test.ts': 30,
  'test/e2e/mcp-server.test.ts': 28,
  'test/e2e/lazy.test.ts': 27,
  'test/e2e/upstream-faults.test.ts': 25,
  'test/e2e/readme-agent-steps.test.ts': 25,
  'test/e2e/shims.test.ts': 23,
  'test/e2e/demo.test.ts': 23,
  'test/e2e/users-machine.test.ts': 21,
  'test/e2e/sessions.test.ts': 19,
  'test/e2e/doctor.test.ts': 18,
  'test/e2e/bad-manifests.test.ts': 18,
  'test/e2e/command-not-found.test.ts': 16,
  'test/e2e/hardening-http.test.ts': 15,
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

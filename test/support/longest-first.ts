import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Each file's seconds in the last recorded full run (file-seconds-reporter.ts writes it). */
export const FILE_SECONDS = fileURLToPath(new URL('./file-seconds.json', import.meta.url))
/** `TUTTI_RECORD_TIMES=1 npx vitest run` (a full run) rewrites FILE_SECONDS. */
export const RECORD_VAR = 'TUTTI_RECORD_TIMES'

function recorded(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(FILE_SECONDS, 'utf8')) as Record<string, number>
  } catch {
    return {}
  }
}

/**
 * Runs the longest files first, so that the workers finish together instead of one waiting out a long
 * file started last. The order comes from the committed file-seconds.json, so that a fresh clone (CI, with
 * no vitest cache) runs in the same order as a developer's machine; a file it does not name yet is placed
 * by vitest's cached duration from the last local run, else counted as mid-length.
 */
const UNKNOWN_E2E = 15
const UNKNOWN_UNIT = 2

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const seconds = recorded()
    const ms = (spec: TestSpecification): number => {
      const rel = path.relative(root, spec.moduleId).split(path.sep).join('/')
      if (seconds[rel] !== undefined) return 1000 * seconds[rel]
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${rel}`)?.duration
      if (cached !== undefined) return cached
      return 1000 * (rel.startsWith('test/e2e/') ? UNKNOWN_E2E : UNKNOWN_UNIT)
    }
    return [...files].sort((a, b) => ms(b) - ms(a))
  }
}

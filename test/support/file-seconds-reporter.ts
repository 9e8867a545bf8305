import fs from 'node:fs'
import path from 'node:path'
import type { Reporter, TestModule, TestRunEndReason, Vitest } from 'vitest/node'
import { FILE_SECONDS, RECORD_VAR } from './longest-first.js'

/**
 * With TUTTI_RECORD_TIMES=1, a full run (every test file of every project) writes each file's seconds to
 * test/support/file-seconds.json, which the sequencer (longest-first.ts) orders by. Only a full run: the
 * table is one run's figures, under one load, so that their order holds.
 */
export default class FileSecondsReporter implements Reporter {
  private ctx: Vitest | undefined
  /** Every test file, globbed when the run starts (reporters end in parallel: the closing line must stay last). */
  private all: string[] = []

  onInit(ctx: Vitest): void {
    this.ctx = ctx
  }

  async onTestRunStart(): Promise<void> {
    if (process.env[RECORD_VAR] !== '1' || !this.ctx) return
    this.all = (await this.ctx.globTestSpecifications()).map((s) => this.rel(s.moduleId))
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason): void {
    if (process.env[RECORD_VAR] !== '1' || !this.ctx) return
    const shown = path.relative(this.ctx.config.root, FILE_SECONDS)
    const ran = new Map(modules.map((m) => [this.rel(m.moduleId), m.diagnostic().duration / 1000]))
    const missing = this.all.filter((f) => !ran.has(f)).length
    const filtered = this.ctx.config.project.length > 0 || this.ctx.config.testNamePattern !== undefined
    const why =
      reason === 'interrupted'
        ? 'the run was interrupted'
        : filtered
          ? 'the run was filtered'
          : missing
            ? `${missing} file(s) did not run`
            : undefined
    if (why) {
      process.stderr.write(`${RECORD_VAR}: ${why}; ${shown} left as it was\n`)
      return
    }
    const rows = [...ran].sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    const table = Object.fromEntries(rows.map(([f, s]) => [f, Math.round(s * 10) / 10]))
    fs.writeFileSync(FILE_SECONDS, `${JSON.stringify(table, null, 2)}\n`)
    process.stderr.write(`${RECORD_VAR}: wrote the seconds of ${ran.size} files to ${shown}\n`)
  }

  private rel(id: string): string {
    return path.relative(this.ctx!.config.root, id).split(path.sep).join('/')
  }
}

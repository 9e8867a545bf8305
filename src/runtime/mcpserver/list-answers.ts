import type { ConnectorMCPTool } from '../registry/route.js'
import type { SessionView } from '../sessions/session-view.js'
import { ToolListAnswer } from './tool-list-answer.js'

/**
 * How many bytes of encoded tools/list answers are kept at once (both eras of each). A view not asked for
 * since is encoded again when it is; a hundred sessions of small views fit many times over, while a few views
 * of 5,000 tools (~2 MiB an era) cannot hold the daemon's memory.
 */
export const LIST_ANSWER_BUDGET_BYTES = 32 * 1024 * 1024

interface Kept {
  /** The registry snapshot the answer was made from: another one (a commit) makes it anew. */
  readonly base: readonly ConnectorMCPTool[]
  readonly answer: ToolListAnswer
  readonly bytes: number
}

/**
 * The encoded tools/list of each view, by view print: sessions that see
 * the same share one answer, whichever session's filtered copy of the
 * snapshot asked first, and the least recently used goes first when the
 * byte budget is spent.
 */
export class ListAnswers {
  private readonly kept = new Map<string, Kept>()
  private bytes = 0

  constructor(
    private readonly serverInfoJson: string,
    private readonly budget = LIST_ANSWER_BUDGET_BYTES,
  ) {}

  /** `base`: the registry's snapshot the answer is made from; `tools`: what `view` is served of it. */
  get(base: readonly ConnectorMCPTool[], view: SessionView, tools: readonly ConnectorMCPTool[]): ToolListAnswer {
    const hit = this.kept.get(view.print)
    if (hit) this.forget(view.print, hit)
    if (hit?.base === base) {
      this.keep(view.print, hit)
      return hit.answer
    }
    let bytes = 0
    for (const tool of tools) bytes += tool.json.length
    const kept = { base, answer: new ToolListAnswer(tools, this.serverInfoJson), bytes: 2 * bytes }
    this.keep(view.print, kept)
    for (const [print, oldest] of this.kept) {
      if (this.bytes <= this.budget || this.kept.size === 1) break
      this.forget(print, oldest)
    }
    return kept.answer
  }

  private keep(print: string, kept: Kept): void {
    this.kept.set(print, kept)
    this.bytes += kept.bytes
  }

  private forget(print: string, kept: Kept): void {
    this.kept.delete(print)
    this.bytes -= kept.bytes
  }
}

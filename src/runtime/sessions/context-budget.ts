import { ErrorCodes, TuttiError } from '../errors.js'
import type { ViewContext } from './view-context.js'

/** `TUTTI_CONTEXT_BUDGET=<tools>:<bytes>` (or `off`): over it, preparing a session warns on stderr. */
export const CONTEXT_BUDGET_ENV = 'TUTTI_CONTEXT_BUDGET'

/**
 * The default budget: about where a client's context starts to pay for tools
 * it will not use (Claude Code defers MCP tools to its tool search past
 * roughly a tenth of the window; 30 kB of definitions is ~7.5k tokens).
 */
export const DEFAULT_CONTEXT_BUDGET = { tools: 40, bytes: 30_000 } as const

export type ContextBudget = { tools: number; bytes: number } | 'off'

export function contextBudget(env: NodeJS.ProcessEnv): ContextBudget {
  const raw = env[CONTEXT_BUDGET_ENV]?.trim()
  if (!raw) return DEFAULT_CONTEXT_BUDGET
  if (raw === 'off') return 'off'
  const m = /^(\d+):(\d+)$/.exec(raw)
  if (!m)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `${CONTEXT_BUDGET_ENV}="${raw.slice(0, 64)}": expected <tools>:<bytes> (say 40:30000) or off`,
    )
  return { tools: Number(m[1]), bytes: Number(m[2]) }
}

const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`

/** What to tell the person starting a session about its context, a line each (none: nothing to say). */
export function contextWarnings(
  context: ViewContext,
  view: { narrowed: boolean; skills: number },
  budget: ContextBudget,
): string[] {
  const narrow = 'narrow it with --connectors, --hide-connectors or the workspace file .tutti/connectors.json'
  if (view.narrowed && context.tools === 0 && view.skills === 0)
    return [`tutti: this session's view leaves no connector tool and no Skill; check its --connectors and project file`]
  if (budget === 'off' || (context.tools <= budget.tools && context.bytes <= budget.bytes)) return []
  return [
    `tutti: this session sees ${context.tools} tools, ${kB(context.bytes)} of definitions (~${context.tokens} ` +
      `tokens), over the budget of ${budget.tools} tools / ${kB(budget.bytes)}; ${narrow} ` +
      `(${CONTEXT_BUDGET_ENV}=<tools>:<bytes> or off sets the budget)`,
  ]
}

import { Flags } from '@oclif/core'
import { OUTCOME_WAIT_MS, type OutcomeWait } from '../runtime/client/connector-outcome.js'

/** `--wait/--no-wait` and `--timeout`: how install and connect wait for the connector's outcome. */
export const outcomeFlags = {
  wait: Flags.boolean({
    description: "wait for the connector's outcome and exit 1 with the reason if it is not ready",
    default: true,
    allowNo: true,
  }),
  timeout: Flags.integer({
    description: 'seconds to wait for the outcome',
    default: OUTCOME_WAIT_MS / 1000,
    min: 1,
    max: 3600,
  }),
}

export function outcomeWait(flags: { wait: boolean; timeout: number }): OutcomeWait {
  return { wait: flags.wait, timeoutMs: flags.timeout * 1000 }
}

export { describeState } from './state-line.js'

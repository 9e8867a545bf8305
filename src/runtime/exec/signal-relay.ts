import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'

/**
 * What `session exec` passes on to the agent. SIGTSTP/SIGCONT are left alone: job control stops and resumes both, like
 * a shell job.
 */
export const RELAYED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGWINCH', 'SIGUSR1', 'SIGUSR2'] as const
type Relayed = (typeof RELAYED_SIGNALS)[number]

/**
 * The ones that end an agent that does not handle them: received before the agent started, they mean "do not start it".
 */
const TERMINATING = new Set<string>(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'])

/**
 * A terminal sends these to its whole foreground process group, which the
 * agent shares with us: it has its own copy already. Passing ours on too
 * would deliver Ctrl-C twice (Claude Code exits on a second Ctrl-C).
 */
const TERMINAL_SIGNALS = new Set<string>(['SIGINT', 'SIGQUIT', 'SIGWINCH'])

/**
 * Whether this process is in the foreground process group of its
 * controlling terminal (Linux: /proc/self/stat's tty_nr and tpgid against
 * our pgrp). Elsewhere, a terminal on stdin is taken as the foreground.
 */
export function inTerminalForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const [, , pgrp, , ttyNr, tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ttyNr !== '0' && pgrp === tpgid
  } catch {
    // no /proc (not Linux): the TTY test is the best guess left
    return process.stdin.isTTY === true
  }
}

/**
 * Passes the signals `session exec` receives on to the agent, once: a
 * terminal signal only when the terminal did not already deliver it to the
 * agent. Installed before the agent starts, so that a Ctrl-C while the
 * session is being prepared is not lost (and the agent is then not started).
 */
export class SignalRelay {
  private target?: ChildProcess
  private early?: NodeJS.Signals
  private readonly handlers = new Map<Relayed, () => void>()

  constructor(private readonly foreground: () => boolean = inTerminalForeground) {}

  start(): void {
    for (const signal of RELAYED_SIGNALS) {
      const handler = () => this.pass(signal)
      this.handlers.set(signal, handler)
      process.on(signal, handler)
    }
  }

  /** The agent is running: signals go to it from now on. */
  attach(child: ChildProcess): void {
    this.target = child
  }

  /** A terminating signal that arrived before the agent was started. */
  get terminatedEarly(): NodeJS.Signals | undefined {
    return this.early
  }

  stop(): void {
    for (const [signal, handler] of this.handlers) process.off(signal, handler)
    this.handlers.clear()
    this.target = undefined
  }

  /** What the handler of `signal` does: remember it before the agent runs, pass it on (or not) after. */
  pass(signal: Relayed): void {
    if (!this.target) {
      if (TERMINATING.has(signal)) this.early ??= signal
      return
    }
    if (TERMINAL_SIGNALS.has(signal) && this.foreground()) return
    // our own child, not yet reaped (the handler goes when it exits): its pid is still its own
    this.target.kill(signal)
  }
}

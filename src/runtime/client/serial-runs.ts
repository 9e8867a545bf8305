/**
 * A callback run one at a time: `changed()` during a run asks for exactly
 * one more run after it, however many times it is called, so a burst of
 * changes costs at most two runs and the last run always follows the last
 * change. A run that throws is reported and does not stop later runs.
 */
export class SerialRuns {
  private running?: Promise<void>
  private again = false
  private stopped = false

  constructor(
    private readonly run: () => void | Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  changed(): void {
    if (this.stopped) return
    this.again = true
    this.running ??= this.drain()
  }

  /** No run starts after this; the one in progress is awaited. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.running
  }

  private async drain(): Promise<void> {
    // the first run starts after changed() has returned, so `running` is set before a run can end
    await undefined
    while (this.again && !this.stopped) {
      this.again = false
      try {
        await this.run()
      } catch (err) {
        // handed to the owner's onError; a later change runs again
        this.onError(err)
      }
    }
    // checked and cleared in one step: a change after this starts a new drain
    this.running = undefined
  }
}

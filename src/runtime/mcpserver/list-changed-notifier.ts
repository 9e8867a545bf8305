/**
 * Coalesces changes into one list_changed notification per burst (tools
 * for the registry, resources for the Skills): several connectors
 * committing within the window produce a single notification on each open
 * listen stream.
 */
export class ListChangedNotifier {
  private timer?: NodeJS.Timeout

  constructor(
    private readonly notify: () => void,
    private readonly windowMs = 25,
  ) {}

  changed(): void {
    if (this.timer) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.notify()
    }, this.windowMs)
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }
}

import type { ServerNotifier } from '@modelcontextprotocol/server'
import type { ConnectorMCPRegistry, ListKind } from '../registry/connector-mcp-registry.js'
import { ListChangedNotifier } from './list-changed-notifier.js'
import type { SkillCatalogue } from './skill-catalogue.js'

/**
 * What makes a list_changed, per list: a commit that changed a connector's
 * tools, prompts or resources (the registry says which), and a change of
 * the Skills served (resources too: the skills extension defines no notice
 * of its own). Each list's bursts are coalesced into one notice; which
 * streams get it is the view bus's decision.
 */
export class ListNotices {
  private readonly notifiers: Record<ListKind, ListChangedNotifier>
  private readonly unsubscribe: Array<() => void> = []

  constructor(notify: ServerNotifier, registry: ConnectorMCPRegistry, skills: SkillCatalogue) {
    this.notifiers = {
      tools: new ListChangedNotifier(() => notify.toolsChanged()),
      prompts: new ListChangedNotifier(() => notify.promptsChanged()),
      resources: new ListChangedNotifier(() => notify.resourcesChanged()),
    }
    this.unsubscribe.push(registry.onChange((change) => this.changed(change.kinds)))
    this.unsubscribe.push(skills.onChange(() => this.notifiers.resources.changed()))
  }

  changed(kinds: readonly ListKind[]): void {
    for (const kind of kinds) this.notifiers[kind].changed()
  }

  dispose(): void {
    for (const off of this.unsubscribe) off()
    for (const notifier of Object.values(this.notifiers)) notifier.dispose()
  }
}

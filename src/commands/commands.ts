import { commands } from '@oclif/plugin-commands'

/** oclif's own `commands` listing, itself hidden so that only `connector available` is public. */
export default class Commands extends commands.commands {
  static override hidden = true
}

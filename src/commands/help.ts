import { Args } from '@oclif/core'
import { TuttiCommand } from '../cli/base-command.js'
import TuttiHelp from '../cli/help.js'

/** `tutti help [COMMAND]`: the same help as `--help`, through the same class (cli/help.ts). */
export default class HelpCommand extends TuttiCommand {
  static override hidden = true
  static override enableJsonFlag = false
  static override strict = false
  static override summary = 'Show help for tutti, a topic or a command'
  static override args = {
    command: Args.string({ description: 'the command or topic, its words as typed', required: false }),
  }
  static override examples = [
    '<%= config.bin %> help',
    '<%= config.bin %> help daemon',
    '<%= config.bin %> help connector install',
  ]

  async run(): Promise<void> {
    const { argv } = await this.parse(HelpCommand)
    await new TuttiHelp(this.config).showHelp(argv as string[])
  }
}

import { Help, type Interfaces } from '@oclif/core'
import { standardizeIDFromArgv } from '@oclif/core/help'
import { reportCommandNotFound } from './hooks/command-not-found.js'

/** The flags that ask oclif for help. */
const HELP_FLAGS = new Set(['--help', '-h'])

/**
 * oclif's help, with tutti's error for a subject that does not exist (the same
 * as for a mistyped command: cli/hooks/command-not-found.ts) instead of oclif's
 * "Error: Command x not found.", and with the commands of a topic that has
 * only hidden ones (`tutti daemon --help`) listed when that topic is asked
 * for by name: a person asking for it wants them, and the root help still
 * shows `connector available` alone.
 */
export default class TuttiHelp extends Help {
  override async showHelp(argv: string[]): Promise<void> {
    const words = argv.filter((a) => !HELP_FLAGS.has(a))
    const subject = this.subjectOf(words)
    if (subject && !this.config.findCommand(subject) && !this.config.findTopic(subject)) {
      const typed = subject.split(':')
      reportCommandNotFound(typed, subject, argv.includes('--json'), this.config)
      return
    }
    await super.showHelp(argv)
  }

  protected override async showTopicHelp(topic: Interfaces.Topic): Promise<void> {
    const prefix = `${topic.name}:`
    const own = this.config.commands.filter((c) => c.id.startsWith(prefix))
    if (own.length === 0 || own.some((c) => !c.hidden)) return super.showTopicHelp(topic)
    const all = this.opts.all
    this.opts.all = true
    try {
      await super.showTopicHelp(topic)
    } finally {
      this.opts.all = all
    }
  }

  /** The command or topic id the words name, as oclif's help reads them (`help` itself and flags skipped). */
  private subjectOf(words: string[]): string | undefined {
    const ids = this.config.topicSeparator === ':' ? words : standardizeIDFromArgv(words, this.config)
    for (const w of ids) {
      if (w === '--') return undefined
      if (w === 'help') continue
      return w.startsWith('-') ? undefined : w
    }
    return undefined
  }
}

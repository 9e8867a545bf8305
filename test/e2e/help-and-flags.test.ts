import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupState, tempStateDir, tutti } from '../support/tutti.js'

// `tutti help`, the help of a topic of hidden commands, and unknown flags, through the built binary: one error
// style (`tutti: ...` on stderr, or {"error":{...}} with --json), exit 2, and the closest flag suggested.
// None of these starts a daemon or writes a state file.
describe('help and unknown flags (the built binary)', () => {
  let dir: string
  beforeAll(() => {
    dir = tempStateDir('help-flags')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('`tutti help` is the root help, exit 0', async () => {
    const [help, flag] = await Promise.all([tutti(dir, ['help']), tutti(dir, ['--help'])])
    expect(help.code).toBe(0)
    expect(help.stderr).toBe('')
    expect(help.stdout).toBe(flag.stdout)
    expect(help.stdout).toMatch(/connector\s+Discover the connectors/)
  })

  it.each([[['daemon', '--help']], [['help', 'daemon']], [['daemon']]])(
    '`tutti %j` lists the daemon commands',
    async (args) => {
      const res = await tutti(dir, args)
      expect(res).toMatchObject({ code: 0, stderr: '' })
      for (const sub of ['doctor', 'run', 'start', 'status', 'stop'])
        expect(res.stdout).toMatch(new RegExp(`daemon ${sub}\\s`))
    },
  )

  it("`tutti help daemon status` is that command's help", async () => {
    const res = await tutti(dir, ['help', 'daemon', 'status'])
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/\$ tutti daemon status \[--json\]/)
  })

  it('help for what does not exist is tutti\'s "not found", exit 2, not oclif\'s', async () => {
    const [byFlag, byCommand] = await Promise.all([
      tutti(dir, ['daemon', 'stat', '--help']),
      tutti(dir, ['help', 'connector', 'avaliable']),
    ])
    expect(byFlag).toEqual({ code: 2, stdout: '', stderr: 'tutti: command "daemon stat" not found\n' })
    expect(byCommand).toEqual({
      code: 2,
      stdout: '',
      stderr: 'tutti: command "connector avaliable" not found. Did you mean "tutti connector available"?\n',
    })
  })

  it('an unknown flag names the closest one, exit 2', async () => {
    const res = await tutti(dir, ['connector', 'install', '--dryrun', 'npm:whatever'])
    expect(res).toEqual({ code: 2, stdout: '', stderr: 'tutti: unknown flag --dryrun; did you mean --dry-run?\n' })
  })

  it('on the lean `connector available` path too, and as JSON with --json', async () => {
    const res = await tutti(dir, ['connector', 'available', '--jsn'])
    expect(res).toEqual({ code: 2, stdout: '', stderr: 'tutti: unknown flag --jsn; did you mean --json?\n' })
    const json = await tutti(dir, ['daemon', 'status', '--verbos', '--json'])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code: 'ARGUMENT_INVALID', message: 'unknown flag --verbos; see tutti daemon status --help' },
    })
  })

  it('several unknown flags, each with its suggestion; a flag of `tutti` itself', async () => {
    const res = await tutti(dir, ['connector', 'uninstall', 'notes', '--purj', '--zzz=1'])
    expect(res.stderr).toBe(
      'tutti: unknown flags --purj (did you mean --purge?), --zzz; see tutti connector uninstall --help\n',
    )
    expect(res.code).toBe(2)
    const root = await tutti(dir, ['--verison'])
    expect(root).toEqual({ code: 2, stdout: '', stderr: 'tutti: unknown flag --verison; did you mean --version?\n' })
  })

  it('nothing was written to the state directory', () => {
    expect(fs.existsSync(dir) ? fs.readdirSync(dir) : []).toEqual([])
  })
})

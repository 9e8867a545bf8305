import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ProcessGroupStdioTransport } from '../../src/runtime/upstream/stdio-transport.js'

const transport = (command: string, cwd: string) =>
  new ProcessGroupStdioTransport({
    command,
    args: [],
    cwd,
    env: process.env,
    maxMessageBytes: 1 << 20,
    closeGraceMs: 1_000,
  })

/* spawn reports a missing working directory as ENOENT, which read as "command not found" for a node that exists. */
describe('a stdio upstream that cannot be started', () => {
  it('names a missing working directory, not the command', async () => {
    const gone = path.join(os.tmpdir(), `tutti-gone-${process.pid}`, 'release')
    await expect(transport(process.execPath, gone).start()).rejects.toThrow(
      `working directory "${gone}" of "${process.execPath}" does not exist`,
    )
  })
  it('names a missing command as not found', async () => {
    await expect(transport('/nonexistent/tutti-no-such-command', os.tmpdir()).start()).rejects.toThrow(
      'command "/nonexistent/tutti-no-such-command" not found',
    )
  })
})

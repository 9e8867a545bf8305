import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { StdinBatch } from '../../src/runtime/upstream/stdin-batch.js'
import { ProcessGroupStdioTransport } from '../../src/runtime/upstream/stdio-transport.js'
import { until } from '../support/eventually.js'
import { REPO } from '../support/tutti.js'

// Lines written to an upstream in one turn of the event loop go as one
// write (stdin-batch.ts), in the order they were written, the SDK's own
// messages included, and nothing queued is lost when the connection closes.
const CHUNKS = path.join(REPO, 'test/fixtures/stdin-chunks.mjs')
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-stdin-batch-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Records each write; its callback waits a turn, as a pipe's does, so a full buffer shows. */
function recorder(highWaterMark = 1 << 20): { stream: Writable; writes: string[] } {
  const writes: string[] = []
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString('utf8'))
      setImmediate(callback)
    },
  })
  return { stream, writes }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('StdinBatch', () => {
  it('writes the lines of one turn as one write, in order, and a later turn apart', async () => {
    const { stream, writes } = recorder()
    const batch = new StdinBatch(stream)
    batch.push('a\n')
    batch.push('b\n')
    batch.push('c\n')
    expect(writes).toEqual([])
    await nextTurn()
    batch.push('d\n')
    await nextTurn()
    expect(writes).toEqual(['a\nb\nc\n', 'd\n'])
  })

  it('flush writes what is queued at once and answers the stream’s backpressure', async () => {
    const { stream, writes } = recorder(1)
    const batch = new StdinBatch(stream)
    expect(batch.flush()).toBe(true)
    batch.push('x\n')
    expect(batch.flush()).toBe(false)
    expect(writes).toEqual(['x\n'])
    await nextTurn()
    expect(writes).toEqual(['x\n'])
  })

  it('drops nothing into a destroyed stream and does not throw', async () => {
    const { stream, writes } = recorder()
    const batch = new StdinBatch(stream)
    batch.push('x\n')
    stream.destroy()
    await nextTurn()
    expect(batch.flush()).toBe(true)
    expect(writes).toEqual([])
  })
})

describe('a stdio upstream reads what one turn wrote at once', () => {
  it('sixteen calls and the SDK’s own message arrive together, in order, and a close flushes first', async () => {
    const trace = path.join(dir, 'chunks.trace')
    const transport = new ProcessGroupStdioTransport({
      command: process.execPath,
      args: [CHUNKS, trace],
      cwd: dir,
      env: process.env,
      maxMessageBytes: 1 << 20,
      closeGraceMs: 2_000,
    })
    await transport.start()
    const ids = Array.from({ length: 16 }, (_, i) => i + 1)
    for (const id of ids)
      expect(
        transport.writeLine(
          `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo' } })}\n`,
        ),
      ).toBe(true)
    await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 16 } })
    expect(await until(() => fs.existsSync(trace) && fs.readFileSync(trace, 'utf8').trim() !== '')).toBe(true)
    expect(
      fs
        .readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([[...ids.map(() => 'tools/call'), 'notifications/cancelled']])

    transport.writeLine(`${JSON.stringify({ jsonrpc: '2.0', id: 99, result: {} })}\n`)
    await transport.close()
    expect(await until(() => fs.readFileSync(trace, 'utf8').includes('id:99'))).toBe(true)
    expect(transport.writeLine('{}\n')).toBe(false)
  })
})

import type { Client } from '@modelcontextprotocol/client'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LISTEN_LIMITS, UpstreamListen } from '../../src/runtime/upstream/upstream-listen.js'

/** A client whose listen streams the test opens, acknowledges and ends by hand. */
function fakeClient(capabilities: Record<string, unknown>) {
  const streams: Array<{ filter: Record<string, unknown>; closedLocally: boolean; end(how: string): void }> = []
  let refuse = 0
  const client = {
    getServerCapabilities: () => capabilities,
    listen: async (filter: Record<string, unknown>) => {
      if (refuse > 0) {
        refuse--
        throw new Error('refused')
      }
      let end!: (how: string) => void
      const closed = new Promise<string>((resolve) => (end = resolve))
      const stream = {
        filter,
        closedLocally: false,
        end,
        honoredFilter: filter,
        closed,
        close: async () => {
          stream.closedLocally = true
          end('local')
        },
      }
      streams.push(stream)
      return stream
    },
  }
  return { client: client as unknown as Client, streams, refuseNext: (n: number) => (refuse = n) }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('UpstreamListen: a 2026-07-28 link’s own subscriptions/listen stream', () => {
  it('listens for the lists the upstream says change; none when it says none do', async () => {
    const { client, streams } = fakeClient({
      tools: { listChanged: true },
      prompts: {},
      resources: { listChanged: true },
    })
    await new UpstreamListen(client, () => undefined).open()
    expect(streams.map((s) => s.filter)).toEqual([{ toolsListChanged: true, resourcesListChanged: true }])
    const quiet = fakeClient({ tools: {} })
    await new UpstreamListen(quiet.client, () => undefined).open()
    expect(quiet.streams).toEqual([])
  })

  it('a subscription is a new filter, acknowledged before the old stream is closed', async () => {
    const { client, streams } = fakeClient({ tools: { listChanged: true }, resources: { subscribe: true } })
    const listen = new UpstreamListen(client, () => undefined)
    await listen.open()
    await listen.subscribe('news://today')
    expect(streams.map((s) => s.filter)).toEqual([
      { toolsListChanged: true },
      { toolsListChanged: true, resourceSubscriptions: ['news://today'] },
    ])
    expect(streams.map((s) => s.closedLocally)).toEqual([true, false])
    await listen.unsubscribe('news://today')
    expect(streams[2]!.filter).toEqual({ toolsListChanged: true })
    expect(streams.map((s) => s.closedLocally)).toEqual([true, true, false])
  })

  it('a stream the upstream drops is opened again after a wait, and the lists are read again', async () => {
    vi.useFakeTimers()
    const { client, streams, refuseNext } = fakeClient({ tools: { listChanged: true } })
    let missed = 0
    const listen = new UpstreamListen(client, () => void missed++)
    await listen.open()
    refuseNext(1)
    streams[0]!.end('remote')
    await vi.advanceTimersByTimeAsync(LISTEN_LIMITS.reopenMs[0])
    // refused once: tried again after the next, longer wait
    expect(streams).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(LISTEN_LIMITS.reopenMs[1])
    expect(streams).toHaveLength(2)
    expect(missed).toBe(1)
    // the connection closes: its stream with it, and a drop afterwards opens nothing
    listen.close()
    expect(streams[1]!.closedLocally).toBe(true)
    await vi.advanceTimersByTimeAsync(LISTEN_LIMITS.reopenMs[3] * 2)
    expect(streams).toHaveLength(2)
  })

  it('a stream closed by the link itself is not opened again', async () => {
    vi.useFakeTimers()
    const { client, streams } = fakeClient({ resources: { subscribe: true } })
    const listen = new UpstreamListen(client, () => undefined)
    await listen.subscribe('a://x')
    await listen.subscribe('a://y')
    await vi.advanceTimersByTimeAsync(LISTEN_LIMITS.reopenMs[3] * 2)
    expect(streams).toHaveLength(2)
  })
})

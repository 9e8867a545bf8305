import { describe, expect, it } from 'vitest'
import { TaskHandles } from '../../src/runtime/mcpserver/task-handles.js'

const ref = { connector: 'research', epoch: 'Ab-_12', taskId: 'c648522f-5d74.46bc/dfac~768f04883209 é' }

describe('TaskHandles', () => {
  it('a handle names the connector and the upstream id, reversibly, and opens for its session', () => {
    const handles = new TaskHandles()
    const handle = handles.mint('session-a', ref)
    expect(handle.startsWith('research.Ab-_12.')).toBe(true)
    // plain ASCII a header can carry (Mcp-Name mirrors it), whatever the upstream's id holds
    expect(handle).toMatch(/^[A-Za-z0-9._-]+$/)
    expect(handles.open('session-a', handle)).toEqual(ref)
  })

  it("another session, another daemon's secret, a changed part or MAC: it opens for none", () => {
    const handles = new TaskHandles()
    const handle = handles.mint('session-a', ref)
    expect(handles.open('session-b', handle)).toBeUndefined()
    expect(new TaskHandles().open('session-a', handle)).toBeUndefined()
    const [key, epoch, id, mac] = handle.split('.') as [string, string, string, string]
    const other = Buffer.from('another-upstream-id').toString('base64url')
    for (const forged of [
      `${key}.${epoch}.${other}.${mac}`,
      `notes.${epoch}.${id}.${mac}`,
      `${key}.XXXXXX.${id}.${mac}`,
      `${key}.${epoch}.${id}.${Buffer.alloc(16).toString('base64url')}`,
      `${key}.${epoch}.${id}.${mac.slice(0, -2)}`,
      `${key}.${epoch}.${id}`,
      `${handle}.x`,
      'Research.a.b.c',
      'x'.repeat(10_000),
    ])
      expect(handles.open('session-a', forged), forged).toBeUndefined()
  })
})

import { expect, it } from 'vitest'
import { SerialRuns } from '../../src/runtime/client/serial-runs.js'

/** Lets pending promise callbacks run (a run starts just after the change that asked for it). */
const tick = () => new Promise((r) => setImmediate(r))

/** A run that stays open until the test lets it finish. */
function gatedRuns() {
  const gates: Array<() => void> = []
  const started: number[] = []
  let active = 0
  let maxActive = 0
  const errors: unknown[] = []
  const runs = new SerialRuns(
    () =>
      new Promise<void>((resolve) => {
        started.push(started.length + 1)
        maxActive = Math.max(maxActive, ++active)
        gates.push(() => {
          active--
          resolve()
        })
      }),
    (err) => errors.push(err),
  )
  const release = async (): Promise<void> => {
    gates.shift()!()
    await tick()
  }
  return { runs, started, gates, release, errors, maxActive: () => maxActive }
}

it('a change runs the callback once', async () => {
  const g = gatedRuns()
  g.runs.changed()
  await tick()
  expect(g.started).toEqual([1])
  await g.release()
  expect(g.started).toEqual([1])
})

it('changes during a run give exactly one more run after it, never two at once', async () => {
  const g = gatedRuns()
  g.runs.changed()
  await tick()
  g.runs.changed()
  g.runs.changed()
  g.runs.changed()
  expect(g.started).toEqual([1])
  await g.release()
  expect(g.started).toEqual([1, 2])
  await g.release()
  expect(g.started).toEqual([1, 2])
  expect(g.maxActive()).toBe(1)
  // idle again: the next change starts a run at once
  g.runs.changed()
  await tick()
  expect(g.started).toEqual([1, 2, 3])
  await g.release()
})

it('a run that throws is reported and later changes still run', async () => {
  let n = 0
  const errors: unknown[] = []
  const runs = new SerialRuns(
    () => {
      n++
      if (n === 1) throw new Error('reload refused')
    },
    (err) => errors.push(err),
  )
  runs.changed()
  await tick()
  expect(errors).toEqual([new Error('reload refused')])
  runs.changed()
  await tick()
  expect(n).toBe(2)
  expect(errors).toHaveLength(1)
})

it('stop() awaits the run in progress and drops the run a change asked for', async () => {
  const g = gatedRuns()
  g.runs.changed()
  await tick()
  g.runs.changed()
  let stopped = false
  const stopping = g.runs.stop().then(() => (stopped = true))
  await tick()
  expect(stopped).toBe(false)
  await g.release()
  await stopping
  expect(g.started).toEqual([1])
  g.runs.changed()
  await tick()
  expect(g.started).toEqual([1])
})

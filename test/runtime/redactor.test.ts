import { expect, it } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { REDACTED, Redactor } from '../../src/runtime/log/redactor.js'

it('redacts by key name, by Bearer pattern and by exact known value', () => {
  const r = new Redactor()
  r.addSecret('hunter2-secret')
  const out = r.redact({
    authorization: 'Bearer abc.def',
    nested: { apiKey: 'k', note: 'header was Bearer xyz123 ok', text: 'value hunter2-secret inside' },
    list: ['hunter2-secret'],
    count: 3,
  })
  expect(out).toEqual({
    authorization: REDACTED,
    nested: { apiKey: REDACTED, note: `header was Bearer ${REDACTED} ok`, text: `value ${REDACTED} inside` },
    list: [REDACTED],
    count: 3,
  })
})

it('the logger writes NDJSON with component tags and no secrets, errors included', () => {
  const lines: string[] = []
  const log = createLogger(memorySink(lines), new Redactor(), 'daemon')
  log.redactor.addSecret('tok_ABCDEFGH')
  log
    .child('upstream')
    .error('failed with tok_ABCDEFGH', { error: new Error('bad token tok_ABCDEFGH'), token: 'tok_ABCDEFGH' })
  const record = JSON.parse(lines[0]!)
  expect(record).toMatchObject({ level: 'error', component: 'upstream', msg: `failed with ${REDACTED}` })
  expect(lines.join('')).not.toContain('tok_ABCDEFGH')
})

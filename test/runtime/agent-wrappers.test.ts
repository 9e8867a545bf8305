import { describe, expect, it } from 'vitest'
import { placeAgent } from '../../src/runtime/exec/agent-wrappers.js'

const at = (argv: string[]) => {
  const [argv0, ...args] = argv
  const place = placeAgent(argv0!, args)
  return place.kind === 'word' ? (place.index < 0 ? argv0 : args[place.index]) : place.kind
}

describe('where the agent is behind a wrapper', () => {
  it('the first word, when it is no wrapper', () => {
    expect(at(['claude', '-p', 'hi'])).toBe('claude')
    expect(at(['/opt/bin/claude'])).toBe('/opt/bin/claude')
  })
  it('the first word after the wrapper’s own options and assignments', () => {
    expect(at(['env', 'FOO=1', 'BAR=x=y', 'claude', '-p'])).toBe('claude')
    expect(at(['/usr/bin/env', '-u', 'HOME', '-i', 'FOO=1', 'claude'])).toBe('claude')
    expect(at(['npx', '-y', '@anthropic-ai/claude-code', '-p', 'x'])).toBe('@anthropic-ai/claude-code')
    expect(at(['npx', '--package', 'pkg', 'claude'])).toBe('claude')
    expect(at(['npm', 'exec', '--', 'claude'])).toBe('claude')
    expect(at(['bunx', '--bun', 'claude'])).toBe('claude')
    expect(at(['pnpm', 'dlx', '@anthropic-ai/claude-code'])).toBe('@anthropic-ai/claude-code')
    expect(at(['node', '--require', 'x.js', 'cli.js', '--flag'])).toBe('cli.js')
    expect(at(['nice', '-n', '5', 'claude'])).toBe('claude')
  })
  it('wrappers nest', () => {
    expect(at(['env', 'A=1', 'npx', '-y', 'claude'])).toBe('claude')
    expect(at(['nohup', 'env', 'A=1', 'node', 'cli.js'])).toBe('cli.js')
  })
  it('a command string, or a wrapper form not known here, has no word', () => {
    expect(at(['sh', '-c', 'claude -p hi'])).toBe('command-string')
    expect(at(['bash', 'run-claude.sh'])).toBe('command-string')
    expect(at(['node', '-e', 'require("x")'])).toBe('command-string')
    expect(at(['npx', '-c', 'claude'])).toBe('command-string')
    expect(at(['env', '-S', 'claude -p'])).toBe('command-string')
    expect(at(['pnpm', 'run', 'agent'])).toBe('command-string')
    expect(at(['env', 'A=1'])).toBe('command-string')
  })
})

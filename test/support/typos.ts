/** Every one-edit typo of `s`: a dropped, doubled, swapped or replaced letter. */
export function typos(s: string): string[] {
  const out = new Set<string>()
  for (let i = 0; i < s.length; i++) {
    if (s[i] === ':') continue
    out.add(s.slice(0, i) + s.slice(i + 1))
    out.add(s.slice(0, i) + s[i] + s.slice(i))
    out.add(s.slice(0, i) + (s[i] === 'x' ? 'q' : 'x') + s.slice(i + 1))
    if (i + 1 < s.length && s[i + 1] !== ':') out.add(s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2))
  }
  out.delete(s)
  return [...out].filter((t) => !t.startsWith(':') && !t.endsWith(':') && !t.includes('::'))
}

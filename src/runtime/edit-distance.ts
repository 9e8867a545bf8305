/**
 * Edit distance counting an adjacent transposition as one edit (optimal string
 * alignment): "availabel" is one typo away from "available", not two.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

/** The candidate `typed` is most likely a typo of: a typo or two, more for longer words; else undefined. */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  let best: { word: string; d: number } | undefined
  for (const word of candidates) {
    const d = editDistance(typed, word)
    if (d > Math.max(2, Math.floor(word.length / 4))) continue
    if (!best || d < best.d) best = { word, d }
  }
  return best?.word
}

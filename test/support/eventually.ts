/** Re-evaluate `fn` until `ok` holds or `ms` pass; returns the last value (the assertion follows). */
export async function eventually<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  let v = await fn()
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50))
    v = await fn()
  }
  return v
}

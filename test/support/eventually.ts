/**
 * The suite's one way to wait for something it cannot be told about (a
 * process gone, a status changed, a file written): re-evaluate `fn` every
 * 50 ms until `ok` holds, and return as soon as it does. The bound only
 * decides how long a broken build takes to fail, so it is generous (a loaded
 * machine is slow, never wrong); the assertion on the returned value follows.
 */
export const EVENTUALLY_MS = 30_000

export async function eventually<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = EVENTUALLY_MS): Promise<T> {
  const deadline = Date.now() + ms
  let v = await fn()
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50))
    v = await fn()
  }
  return v
}

/** `eventually` for a condition: resolves whether it held within the bound. */
export const until = async (condition: () => boolean | Promise<boolean>, ms = EVENTUALLY_MS): Promise<boolean> =>
  eventually(condition, (v) => v, ms)

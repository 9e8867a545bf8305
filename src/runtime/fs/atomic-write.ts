import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'

export const PRIVATE_FILE_MODE = 0o600
export const PRIVATE_DIR_MODE = 0o700

/** mkdir -p with 0700 on every directory it creates. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
}

/**
 * Write via temp file + fsync + rename so readers see the old or the new
 * content, never a torn file. The temp file lives beside the target so the
 * rename never crosses a filesystem.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  mode = PRIVATE_FILE_MODE,
): Promise<void> {
  const dir = path.dirname(file)
  await ensurePrivateDir(dir)
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  const handle = await fs.open(tmp, 'wx', mode)
  try {
    await handle.writeFile(data)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await fs.chmod(tmp, mode)
    await fs.rename(tmp, file)
  } catch (err) {
    await fs.rm(tmp, { force: true })
    throw err
  }
}

export async function writeJsonAtomic(file: string, value: unknown, mode = PRIVATE_FILE_MODE): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, mode)
}

/** undefined when the file does not exist; throws on anything else. */
export async function readJsonIfExists(file: string): Promise<unknown | undefined> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  return JSON.parse(text)
}

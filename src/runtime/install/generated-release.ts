import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import { MANIFEST_FILE } from '../names.js'
import { ReleaseTreeError, walkRelease } from '../release/release-tree.js'
import type { GeneratedSource } from '../sources/generated-source.js'
import { copyEntries, removeTree } from '../store/release-store.js'

// A package without a tutti manifest: the release tutti makes of it, and what the person installing it is told.

/** What a package without a tutti manifest was taken as. */
export interface SourceSummary {
  kind: string
  /** The package's own name (with the kind, its identity). */
  name: string
  skipped: string[]
  notes?: string[]
}

/**
 * The generated manifest written into the release, so the release is a
 * normal tutti release and its digest covers the manifest. A directory of
 * the user's is copied first: the source is never written to.
 */
export async function writeGenerated(
  generated: GeneratedSource,
  source: string | undefined,
  scratch: Array<() => Promise<void>>,
  tmpDir: string,
): Promise<string> {
  let root = generated.root
  if (source !== undefined && path.resolve(root) === path.resolve(source)) {
    let entries: Awaited<ReturnType<typeof walkRelease>>
    try {
      entries = await walkRelease(await fs.realpath(root))
    } catch (err) {
      if (err instanceof ReleaseTreeError)
        throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${source}: ${err.message}`, { cause: err })
      throw err
    }
    root = path.join(tmpDir, `stage-${String(generated.manifest.key)}-${randomBytes(4).toString('hex')}`)
    await copyEntries(await fs.realpath(generated.root), root, entries)
    scratch.push(() => removeTree(root))
  }
  await fs.writeFile(path.join(root, MANIFEST_FILE), `${JSON.stringify(generated.manifest, null, 2)}\n`, {
    mode: 0o644,
  })
  return root
}

/** How an outcome names the package it was taken from. */
export const sourceSummary = (generated: GeneratedSource): SourceSummary => ({
  kind: generated.kind,
  name: generated.source.name,
  skipped: generated.skipped,
  ...(generated.notes?.length ? { notes: generated.notes } : {}),
})

/** What the mapping left out and how it carried secrets, for the person installing (stderr, also in a dry run). */
export function noticeMapping(generated: GeneratedSource, notice: ((line: string) => void) | undefined): void {
  for (const line of generated.skipped) notice?.(`skipped: ${line}`)
  for (const line of generated.notes ?? []) notice?.(`note: ${line}`)
}

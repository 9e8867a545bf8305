import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { packTarball } from './npm-fixtures.js'

interface Published {
  manifest: Record<string, unknown>
  tarball: Buffer
}

/**
 * A tiny npm registry on loopback: packuments and tarballs of packages the
 * test publishes, so that `npm view` and `npm pack` through the user's npm
 * (npm_config_registry) reach something offline. It counts what is asked
 * of it: a reinstall that needs no fetch must ask nothing.
 */
export class NpmRegistryFixture {
  private readonly packages = new Map<string, { versions: Map<string, Published>; latest?: string }>()
  private readonly server = http.createServer((req, res) => this.serve(req, res))
  private readonly scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-registry-'))
  /** Every request, as `packument <name>` or `tarball <name>@<version>`. */
  readonly requests: string[] = []
  url = ''

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`
    return this
  }

  /** The environment a user's npm needs to use it: this registry, and a cache of the test's own. */
  env(): Record<string, string> {
    const cache = path.join(this.scratch, 'cache')
    return { npm_config_registry: this.url, npm_config_cache: cache, npm_config_prefer_online: 'true' }
  }

  /** Publish a package directory (its package.json says name and version); `latest` moves to it unless told. */
  publish(dir: string, options: { tag?: boolean } = {}): void {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>
    const name = manifest.name as string
    const version = manifest.version as string
    const tarball = fs.readFileSync(packTarball(dir, this.scratch))
    const entry = this.packages.get(name) ?? { versions: new Map<string, Published>() }
    entry.versions.set(version, { manifest, tarball })
    if (options.tag !== false) entry.latest = version
    this.packages.set(name, entry)
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
    fs.rmSync(this.scratch, { recursive: true, force: true })
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url)
    const tarball = /^\/-\/tarballs\/(.+)\/([^/]+)\.tgz$/.exec(url.pathname)
    const send = (status: number, body: string | Buffer, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' })
      res.end(body)
    }
    if (tarball) {
      const [name, version] = [decodeURIComponent(tarball[1]!), decodeURIComponent(tarball[2]!)]
      this.requests.push(`tarball ${name}@${version}`)
      const found = this.packages.get(name)?.versions.get(version)
      return found ? send(200, found.tarball, 'application/octet-stream') : send(404, '{"error":"not found"}')
    }
    const name = decodeURIComponent(url.pathname.slice(1))
    this.requests.push(`packument ${name}`)
    const entry = this.packages.get(name)
    if (!entry) return send(404, '{"error":"not found"}')
    const versions: Record<string, unknown> = {}
    for (const [version, p] of entry.versions) {
      const dist = {
        tarball: `${this.url}-/tarballs/${encodeURIComponent(name)}/${version}.tgz`,
        shasum: createHash('sha1').update(p.tarball).digest('hex'),
        integrity: `sha512-${createHash('sha512').update(p.tarball).digest('base64')}`,
      }
      versions[version] = { ...p.manifest, _id: `${name}@${version}`, dist }
    }
    send(200, JSON.stringify({ name, 'dist-tags': entry.latest ? { latest: entry.latest } : {}, versions }))
  }
}

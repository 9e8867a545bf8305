import fs from 'node:fs/promises'
import { assertConnectorKey } from '../connector-key.js'
import type { DryRunOutcome, InstallOutcome } from '../install/connector-installer.js'
import type { GivenKey } from '../manifest/given-keys.js'
import type { StatePaths } from '../paths.js'
import type { AvailableResult } from '../control-protocol/available.js'
import type { ConnectorState } from '../control-protocol/connector-state.js'
import type { RevocationOutcome } from '../oauth/revocation.js'
import { preRegisteredClient, type ClientFlags, type PreRegisteredClient } from '../oauth/pre-registered-client.js'
import type { ConnectorStore, InstalledRelease } from '../store/connector-store.js'
import type { ToolFilterChange } from '../store/tool-filter-record.js'
import type { CheckedAgainst, ToolFilterOutcome, ToolFlags } from './connector-visibility.js'
import { expectOutcome, OUTCOME_WAIT_MS, type OutcomeWait } from './connector-outcome.js'
import { ensureDaemon } from './ensure-daemon.js'

export interface InstallRequest extends OutcomeWait {
  progress?: (line: string) => void
  /** What a package's mapping skipped (stderr). */
  notice?: (line: string) => void
  /** For packages without a tutti manifest (see sources/). */
  key?: string
  server?: string
  args?: string[]
  /** The command form's words after "--"; a URL source's `--header` lines. */
  command?: string[]
  headers?: string[]
  /** `--env`, `--from-env`, `--secret` (values read by the command, never in any child's argv). */
  keys?: GivenKey[]
  /** Another package under the key is replaced (`--replace`), what it leaves deleted (`--purge`). */
  replace?: boolean
  purge?: boolean
  /** `--allow-scripts`: the packages' install scripts run (native builds). */
  allowScripts?: boolean
  /** `connector update` of a server.json npm package: the newer version to install. */
  packageVersion?: string
}

const sourceRequest = (r: InstallRequest) => ({
  ...(r.progress ? { progress: r.progress } : {}),
  ...(r.notice ? { notice: r.notice } : {}),
  ...(r.key !== undefined ? { key: r.key } : {}),
  ...(r.server !== undefined ? { server: r.server } : {}),
  ...(r.args?.length ? { args: r.args } : {}),
  ...(r.command?.length ? { command: r.command } : {}),
  ...(r.headers?.length ? { headers: r.headers } : {}),
  ...(r.keys?.length ? { keys: r.keys } : {}),
  ...(r.replace ? { replace: true } : {}),
  ...(r.purge ? { purge: true } : {}),
  ...(r.allowScripts ? { allowScripts: true } : {}),
  ...(r.packageVersion !== undefined ? { packageVersion: r.packageVersion } : {}),
})

export interface ConnectRequest extends OutcomeWait {
  /** `--env`, `--from-env`, `--secret`: declared credentials (a generated connector declares new ones). */
  keys: GivenKey[]
  settings: Record<string, string>
  /**
   * OAuth connectors: the sign-in (`--browser`, `--sign-in-timeout`, `--client-id`, `--client-secret-from-env`'s value)
   * and where its human lines go (stderr).
   */
  signIn?: { browser?: string; timeoutMs: number; print: (line: string) => void; client?: ClientFlags }
  /** `--tools`, `--hide-tools`, `--all-tools`, `--always-load` (connector-visibility.ts). */
  tools?: ToolFlags
}

/** Only tool flags: the filter changes, nothing else (no command resolved again, no sign-in, no restart). */
const onlyToolFlags = (r: ConnectRequest) =>
  !!r.tools && !r.keys.length && !Object.keys(r.settings).length && !r.signIn?.browser && !r.signIn?.client?.clientId

type ConnectResult = { key: string; variables: string[]; settings: string[]; state?: ConnectorState }

export type DataDisposition = 'kept' | 'purged' | 'none'

/**
 * What the connector commands do: change the state on disk (validated
 * first, under the state lock), then have the daemon reconcile and wait for
 * the outcome. Installing never depends on the daemon being up already: it
 * is started here. `env` is the invoking shell's environment: commands and
 * npm are resolved against its PATH, and it is what upstreams inherit.
 */
export class Connectors {
  constructor(
    private readonly paths: StatePaths,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  // validation (zod, yaml) is loaded only by the commands that change state
  private async store(): Promise<ConnectorStore> {
    const { ConnectorStore } = await import('../store/connector-store.js')
    return new ConnectorStore(this.paths)
  }

  private async installer(store: ConnectorStore) {
    const { ConnectorInstaller } = await import('../install/connector-installer.js')
    return new ConnectorInstaller(this.paths, store)
  }

  /** What a session sees (`token`: its TUTTI_CONNECTOR_TOKEN), or without one, every connector. */
  async available(token?: string): Promise<AvailableResult> {
    return (await ensureDaemon(this.paths)).available(token)
  }

  /** `source` undefined: the command form (`request.command`). */
  async install(
    source: string | undefined,
    request: InstallRequest,
  ): Promise<InstallOutcome & { state?: ConnectorState }> {
    const installer = await this.installer(await this.store())
    const result = await installer.install(source, { env: this.env, ...sourceRequest(request) })
    const state = await this.reconcile(result.key, request)
    expectOutcome(`installed ${result.key} ${result.version}`, state, request)
    return { ...result, ...(state ? { state } : {}) }
  }

  /** The manifest `source` would be installed with; nothing is written and no daemon is started. */
  async installDryRun(source: string | undefined, request: InstallRequest): Promise<DryRunOutcome> {
    return (await this.installer(await this.store())).dryRun(source, { env: this.env, ...sourceRequest(request) })
  }

  async uninstall(
    key: string,
    options: { purge: boolean },
  ): Promise<{ key: string; uninstalled: true; data: DataDisposition; dataDir: string }> {
    assertConnectorKey(key)
    await (await this.store()).uninstall(key)
    await this.forgetGrant(key, 'uninstall')
    await this.reconcile(key, { wait: true, timeoutMs: OUTCOME_WAIT_MS })
    const dataDir = this.paths.dataDir(key)
    const exists = await fs.stat(dataDir).then(
      () => true,
      () => false,
    )
    if (options.purge) {
      const { removeTree } = await import('../store/release-store.js')
      if (exists) await removeTree(dataDir)
      // and what `install --replace` set aside of the connectors it replaced under this key
      await removeTree(this.paths.replacedDir(key))
      // only when nothing else is left there (rmdir refuses otherwise)
      await fs.rmdir(this.paths.connectorDir(key)).catch(() => undefined)
    }
    return { key, uninstalled: true, data: !exists ? 'none' : options.purge ? 'purged' : 'kept', dataDir }
  }

  async connect(key: string, request: ConnectRequest): Promise<ConnectResult & { tools?: ToolFilterOutcome }> {
    assertConnectorKey(key)
    const store = await this.store()
    const current = await store.get(key)
    // bad client flags and unknown tool names are refused before anything is stored
    const preRegistered = preRegisteredClient(key, current.release.manifest.auth, request.signIn?.client)
    const visibility = request.tools ? await import('./connector-visibility.js') : undefined
    const filter = request.tools && (await visibility!.checkToolFlags(this.paths, current, request.tools))
    const only = onlyToolFlags(request)
    const result = only ? visibility!.storedNames(current) : await this.storeKeys(store, current, request)
    const tools = filter && (await this.storeToolFilter(store, key, filter))
    // signIn decides: an oauth manifest, or a remote that offers OAuth on a 401
    if (!only) await this.signIn(await store.get(key), request, preRegistered)
    const state = await this.reconcile(key, request)
    expectOutcome(`connected ${key}`, state, request)
    const { variables, settings } = result
    return { key, variables, settings, ...(tools ? { tools } : {}), ...(state ? { state } : {}) }
  }

  /** The checked filter, stored for the release installed now (`storeKeys` may have declared a new one). */
  private async storeToolFilter(
    store: ConnectorStore,
    key: string,
    filter: { change: ToolFilterChange; checkedAgainst: CheckedAgainst },
  ): Promise<ToolFilterOutcome> {
    const { setToolFilter } = await import('../store/connector-visibility.js')
    const { digest } = (await store.get(key)).installed
    const { changed, toolFilter } = await setToolFilter(this.paths, key, digest, filter.change)
    return { changed, ...(toolFilter ? { toolFilter } : {}), checkedAgainst: filter.checkedAgainst }
  }

  /**
   * The values as the manifest declares them; names a generated manifest
   * lacks are declared by a new release generation (install/declare-variables.ts).
   */
  private async storeKeys(store: ConnectorStore, current: InstalledRelease, request: ConnectRequest) {
    const { checkGivenKeys, splitGivenKeys } = await import('../manifest/given-keys.js')
    const settings = Object.entries(request.settings).map(([name, value]) => ({
      name,
      value,
      secret: false,
      flag: '--set',
    }))
    checkGivenKeys([...request.keys, ...settings])
    const { declareAndStore, isGenerated, undeclared } = await import('../install/declare-variables.js')
    const key = current.release.manifest.key
    if (isGenerated(current) && undeclared(current, [...request.keys, ...settings]).length) {
      await declareAndStore(this.paths, store, current, [...request.keys, ...settings], this.env)
      const stored = await store.get(key)
      const storedSettings = Object.keys(stored.installed.settings ?? {}).sort()
      return { variables: Object.keys(stored.credentials).sort(), settings: storedSettings }
    }
    // the connecting shell resolves the command again: a fixed PATH is picked up here
    const runtime = await (await this.installer(store)).resolveRuntime(current.release, this.env)
    // --env of a declared setting sets it, as on install; an undeclared name is refused saying how to declare it
    const given = splitGivenKeys(current.release.manifest, request.keys)
    const settingValues = { ...given.settings, ...request.settings }
    return store.connect(key, { credentials: given.credentials, settings: settingValues, runtime })
  }

  async disconnect(
    key: string,
  ): Promise<{ key: string; disconnected: boolean; revocation?: RevocationOutcome; state?: ConnectorState }> {
    assertConnectorKey(key)
    const result = await (await this.store()).disconnect(key)
    const { forgot, revocation } = await this.forgetGrant(key, 'disconnect')
    const state = await this.reconcile(key, { wait: true, timeoutMs: OUTCOME_WAIT_MS })
    return {
      key,
      disconnected: result.removed || forgot,
      ...(revocation ? { revocation } : {}),
      ...(state ? { state } : {}),
    }
  }

  /**
   * OAuth: the browser sign-in, against the server URL and headers the daemon will use (oauth/sign-in.ts). A
   * remote connector with no auth in its manifest signs in too when its server offers OAuth (oauth/sign-in-probe.ts).
   */
  private async signIn(
    current: InstalledRelease,
    request: ConnectRequest,
    preRegistered: PreRegisteredClient | undefined,
  ): Promise<void> {
    const { manifest } = current.release
    if (manifest.auth.kind === 'env' || manifest.mcp?.transport !== 'http') return
    const { upstreamSpec } = await import('../upstream/upstream-spec.js')
    const record = {
      environment: current.installed.environment ?? {},
      ...(current.installed.settings ? { settings: current.installed.settings } : {}),
    }
    const spec = upstreamSpec(current.release, record, current.credentials, this.paths.dataDir(manifest.key))
    if (spec?.kind !== 'http') return
    if (manifest.auth.kind === 'none' && !(await this.offersOAuth(manifest.key, spec.url, spec.headers))) return
    const { OAuthSignIn, SIGN_IN_WAIT_MS } = await import('../oauth/sign-in.js')
    const { clientId, scopes, resource } = manifest.auth.kind === 'oauth' ? manifest.auth : {}
    const target = {
      key: manifest.key,
      serverUrl: spec.url,
      headers: spec.headers,
      ...(clientId ? { clientId } : {}),
      ...(scopes ? { scopes } : {}),
      ...(resource ? { resource } : {}),
      ...(preRegistered ? { preRegistered } : {}),
    }
    const print = request.signIn?.print ?? ((line: string) => process.stderr.write(`${line}\n`))
    await new OAuthSignIn(this.paths, target).run({
      env: this.env,
      timeoutMs: request.signIn?.timeoutMs ?? SIGN_IN_WAIT_MS,
      print,
      ...(request.signIn?.browser ? { browser: request.signIn.browser } : {}),
    })
  }

  /** A server the manifest says nothing of: OAuth when a sign-in was kept for it, or when it offers one now. */
  private async offersOAuth(key: string, url: string, headers: Record<string, string>): Promise<boolean> {
    const { OAuthGrantStore } = await import('../oauth/grant-store.js')
    if (await new OAuthGrantStore(this.paths).get(key)) return true
    const { probeSignIn } = await import('../oauth/sign-in-probe.js')
    // unreachable or wanting credentials: the reconcile that follows reports it
    return (await probeSignIn(url, headers).catch(() => undefined))?.kind === 'oauth'
  }

  /**
   * Forget a connector's OAuth grant. `disconnect` revokes the tokens first
   * (RFC 7009, where offered) and keeps the client registration for the next
   * sign-in; `uninstall` forgets everything.
   */
  private async forgetGrant(
    key: string,
    why: 'disconnect' | 'uninstall',
  ): Promise<{ forgot: boolean; revocation?: RevocationOutcome }> {
    const { OAuthGrantStore } = await import('../oauth/grant-store.js')
    const grants = new OAuthGrantStore(this.paths)
    const grant = await grants.get(key)
    if (!grant) return { forgot: false }
    const revocation =
      why === 'disconnect' && grant.tokens
        ? await (await import('../oauth/revocation.js')).revokeGrant(grant)
        : undefined
    await grants.update(key, (g) =>
      g && why === 'disconnect' ? { serverUrl: g.serverUrl, ...(g.client ? { client: g.client } : {}) } : undefined,
    )
    return { forgot: !!grant.tokens || why === 'uninstall', ...(revocation ? { revocation } : {}) }
  }

  private async reconcile(key: string, wait: OutcomeWait): Promise<ConnectorState | undefined> {
    const daemon = await ensureDaemon(this.paths)
    return (await daemon.reconcile([key], wait.wait ? wait.timeoutMs : 0)).connectors.find((c) => c.key === key)
  }
}

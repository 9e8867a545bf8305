import { timingSafeEqual } from 'node:crypto'
import { ErrorCodes, isTuttiError } from '../../errors.js'
import { errorResponse, jsonResponse } from '../../http-surface/error-response.js'
import { HTTP_LIMITS } from '../../http-surface/http-limits.js'
import { readBodyLimited } from '../../http-surface/read-body.js'
import { availableMessage } from '../../control-protocol/available.js'
import { doctorSnapshotMessage } from '../../control-protocol/doctor.js'
import { healthMessage } from '../../control-protocol/health.js'
import type { ControlMessage } from '../../control-protocol/message.js'
import { reconcileMessage } from '../../control-protocol/reconcile.js'
import { sessionPrepareMessage } from '../../control-protocol/session-prepare.js'
import { sessionRevokeMessage } from '../../control-protocol/session-revoke.js'
import { statusMessage } from '../../control-protocol/status.js'
import { stopMessage } from '../../control-protocol/stop.js'
import { toolTableMessage } from '../../control-protocol/tool-table.js'
import type { DaemonContext } from '../context.js'
import { handleAvailable } from './available.js'
import { handleDoctorSnapshot } from './doctor.js'
import { handleHealth } from './health.js'
import { handleReconcile } from './reconcile.js'
import { handleSessionPrepare } from './session-prepare.js'
import { handleSessionRevoke } from './session-revoke.js'
import { handleStatus } from './status.js'
import { handleStop } from './stop.js'
import { handleToolTable } from './tool-table.js'

type Handler = (ctx: DaemonContext, req: never) => Promise<unknown>
interface Route {
  message: ControlMessage<unknown, unknown>
  handle: Handler
}

const routes = new Map<string, Route>()
function route<Req, Res>(
  message: ControlMessage<Req, Res>,
  handle: (ctx: DaemonContext, req: Req) => Promise<Res>,
): void {
  routes.set(message.name, { message: message as ControlMessage<unknown, unknown>, handle: handle as Handler })
}
route(healthMessage, handleHealth)
route(statusMessage, handleStatus)
route(availableMessage, handleAvailable)
route(reconcileMessage, handleReconcile)
route(stopMessage, handleStop)
route(sessionPrepareMessage, handleSessionPrepare)
route(sessionRevokeMessage, handleSessionRevoke)
route(doctorSnapshotMessage, handleDoctorSnapshot)
route(toolTableMessage, handleToolTable)

/** Answers made of tutti's own data only, which redaction must not touch. */
const EXACT_ANSWERS = new Set<string>([
  healthMessage.name,
  sessionPrepareMessage.name,
  sessionRevokeMessage.name,
  stopMessage.name,
])

function tokenMatches(header: string | null, expected: string): boolean {
  const presented = header?.startsWith('Bearer ') ? header.slice(7) : ''
  const a = Buffer.from(presented)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** POST /control/<name>: authenticated by the control token from daemon.json. */
export async function handleControl(
  ctx: DaemonContext,
  controlToken: string,
  name: string,
  req: Request,
): Promise<Response> {
  if (!tokenMatches(req.headers.get('authorization'), controlToken))
    return errorResponse(401, ErrorCodes.UNAUTHORIZED, 'missing or wrong control token')
  const r = routes.get(name)
  if (!r) return errorResponse(404, ErrorCodes.UNKNOWN_MESSAGE, `unknown control message "${name}"`)
  // the token and the message name are checked first: a refused request's body is never read
  const read = await readBodyLimited(req, HTTP_LIMITS.controlBodyBytes)
  if (!read.ok && read.reason === 'too-large')
    return errorResponse(413, ErrorCodes.ARGUMENT_INVALID, 'control request body too large')
  if (!read.ok) return errorResponse(400, ErrorCodes.ARGUMENT_INVALID, 'control request body did not arrive in full')
  let json: unknown
  try {
    json = read.text ? JSON.parse(read.text) : {}
  } catch {
    // answered as a 400 that says why: the caller's body is at fault
    return errorResponse(400, ErrorCodes.ARGUMENT_INVALID, 'control request body is not JSON')
  }
  const parsed = r.message.request.safeParse(json)
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
      .join('; ')
    return errorResponse(400, ErrorCodes.ARGUMENT_INVALID, `bad ${name} request: ${issues}`)
  }
  try {
    const result = await r.handle(ctx, parsed.data as never)
    // an upstream may echo a credential anywhere (a stderr tail, a tool description): no answer that carries
    // connector text carries one. The others are left exact: session-prepare's token is what it is asked for,
    // and health is the identity proof (a short credential may well occur in a path)
    return jsonResponse(200, EXACT_ANSWERS.has(name) ? result : ctx.log.redactor.redactSecrets(result))
  } catch (err) {
    if (isTuttiError(err))
      return errorResponse(err.kind === 'input' ? 400 : 500, err.code, ctx.log.redactor.redactString(err.message))
    ctx.log.error('control handler failed', { message: name, error: err })
    return errorResponse(500, ErrorCodes.INTERNAL, ctx.log.redactor.redactString((err as Error).message))
  }
}

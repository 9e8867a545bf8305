import type { z } from 'zod'

/**
 * One control message: a name (the route `POST /control/<name>`), and the
 * shapes of its request and response. Each message type lives in its own
 * file next to this one; the daemon's handlers live in daemon/control/.
 */
export interface ControlMessage<Req, Res, Name extends string = string> {
  readonly name: Name
  readonly request: z.ZodType<Req>
  readonly response: z.ZodType<Res>
}

export function defineMessage<Req, Res, Name extends string>(
  name: Name,
  request: z.ZodType<Req>,
  response: z.ZodType<Res>,
): ControlMessage<Req, Res, Name> {
  return { name, request, response }
}

// biome-ignore-start lint/suspicious/noExplicitAny: `any` is what lets `infer` match any message's other parameters
export type RequestOf<M> = M extends ControlMessage<infer Req, any, any> ? Req : never
export type ResponseOf<M> = M extends ControlMessage<any, infer Res, any> ? Res : never
export type NameOf<M> = M extends ControlMessage<any, any, infer N> ? N : never
// biome-ignore-end lint/suspicious/noExplicitAny: -

import type { ConnectorMCPTool } from '../registry/route.js'
import type { Era } from './classify.js'

/**
 * The tools/list answer of one registry snapshot, encoded once per era as
 * the bytes before and after the request id. 5,000 tools are ~2.1 MiB:
 * joining them, measuring the string and encoding it to UTF-8 again on
 * every request cost a few ms of the 8 ms a whole list may take; a request
 * now costs its id and the write of these same buffers.
 */
export interface ListBytes {
  readonly head: Buffer
  readonly tail: Buffer
}

export class ToolListAnswer {
  private readonly byEra = new Map<Era, ListBytes>()

  constructor(
    readonly snapshot: readonly ConnectorMCPTool[],
    private readonly serverInfoJson: string,
  ) {}

  bytes(era: Era): ListBytes {
    let bytes = this.byEra.get(era)
    if (!bytes) {
      // each tool was serialized once, when its route was built
      const tools = `[${this.snapshot.map((t) => t.json).join(',')}]`
      bytes =
        era === 'legacy'
          ? {
              head: Buffer.from(`event: message\ndata: {"result":{"tools":${tools}},"jsonrpc":"2.0","id":`),
              tail: Buffer.from('}\n\n'),
            }
          : {
              head: Buffer.from(
                `{"result":{"tools":${tools},"resultType":"complete","ttlMs":0,"cacheScope":"private",` +
                  `"_meta":${this.serverInfoJson}},"jsonrpc":"2.0","id":`,
              ),
              tail: Buffer.from('}'),
            }
      this.byEra.set(era, bytes)
    }
    return bytes
  }
}

import http from 'node:http'

/**
 * A loopback reverse proxy that adds one Authorization header and passes
 * everything else through unchanged (Host and Origin included, so the
 * daemon's own Host/Origin guard still sees what the client sent). For tools
 * that cannot send headers, such as the MCP conformance suite.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'authorization',
])

export async function startAuthProxy(
  target: string,
  authorization: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target)
  if (upstream.hostname !== '127.0.0.1') throw new Error('the proxy only forwards to 127.0.0.1')
  const server = http.createServer((req, res) => {
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value
    headers.authorization = authorization
    const out = http.request(
      { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers, setHost: false },
      (up) => {
        const back: Record<string, string | string[]> = {}
        for (const [name, value] of Object.entries(up.headers))
          if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value
        res.writeHead(up.statusCode ?? 502, back)
        up.pipe(res)
      },
    )
    out.on('error', () => res.writeHead(502).end())
    req.pipe(out)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

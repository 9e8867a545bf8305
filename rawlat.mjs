import http from 'node:http'
import fs from 'node:fs'
const s = JSON.parse(fs.readFileSync('/tmp/prep.json', 'utf8')).mcpServers[0]
const u = new URL(s.url)
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 })
const med = (a) => { a = [...a].sort((x, y) => x - y); return a[Math.floor(a.length / 2)] }
function post(headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { ...s.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => { const c = []; res.on('data', (d) => c.push(d)); res.on('end', () => resolve(Buffer.concat(c).toString())) })
    req.on('error', reject); req.end(body)
  })
}
const modern = () => post({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'everything_echo' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'everything_echo', arguments: { message: 'x' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }))
const legacy = () => post({ 'mcp-protocol-version': '2025-06-18' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'everything_echo', arguments: { message: 'x' } } }))
for (const [label, f] of [['modern', modern], ['legacy', legacy]]) {
  console.log((await f()).slice(0, 120))
  for (let i = 0; i < 100; i++) await f()
  const t = []; for (let i = 0; i < 500; i++) { const s = performance.now(); await f(); t.push(performance.now() - s) }
  const s0 = performance.now(); let n = 0
  await Promise.all(Array.from({ length: 16 }, async () => { while (n < 3000) { n++; await f() } }))
  console.log(label, 'raw-client median', med(t).toFixed(3), 'thru', (3000 / ((performance.now() - s0) / 1000)).toFixed(0))
}
process.exit(0)

// The "browser" of the conformance driver's OAuth sign-ins (`tutti connector
// connect --browser`): GETs the authorization URL and follows its redirects
// (the suite's mock authorization server approves at once) to tutti's
// loopback redirect URI, which is what a person's browser would do.
const url = process.argv[2]
try {
  const res = await fetch(url, { redirect: 'follow' })
  process.stderr.write(`[browser] ${res.status} at ${new URL(res.url).origin}${new URL(res.url).pathname}\n`)
} catch (err) {
  process.stderr.write(`[browser] ${/** @type {Error} */ (err).message}\n`)
  process.exitCode = 1
}

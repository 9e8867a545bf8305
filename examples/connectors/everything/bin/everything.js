#!/usr/bin/env node
// The everything connector's CLI: a small, honest command line used to show
// how shims pass argv, stdio, signals and exit codes through unchanged.
const VERSION = '1.0.0'
const [command, ...rest] = process.argv.slice(2)

switch (command) {
  case '--version':
    process.stdout.write(`${VERSION}\n`)
    break
  case 'echo':
    process.stdout.write(`${rest.join(' ')}\n`)
    break
  case 'sum': {
    const total = rest.reduce((acc, n) => acc + Number(n), 0)
    if (Number.isNaN(total)) {
      process.stderr.write('sum: every argument must be a number\n')
      process.exit(2)
    }
    process.stdout.write(`${total}\n`)
    break
  }
  case 'whoami':
    // proves the credential reached the connector without printing it
    process.stdout.write(process.env.EVERYTHING_API_KEY ? 'authenticated\n' : 'anonymous\n')
    break
  default:
    process.stdout.write('usage: tutti-connector-everything <echo <text...> | sum <n...> | whoami | --version>\n')
    process.exit(command ? 2 : 0)
}

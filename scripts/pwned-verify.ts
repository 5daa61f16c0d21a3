/**
 * `npm run pwned:verify -- STORE` (in the image: `node dist/scripts/pwned-verify.js STORE`): reads
 * a whole breached-password store and checks the data's SHA-256 against its header and every
 * record's order (src/screening/import.ts verifyStore). The server checks only the header and the
 * index when it opens a store; run this after copying a store to where the server reads it.
 * Exit status: 0 sound, 1 damaged or not a store (the message says what), 2 wrong arguments.
 */
import { ConfigError } from '../src/config.js'
import { verifyStore } from '../src/screening/import.js'

const paths = process.argv.slice(2)
if (paths.length !== 1 || paths[0]!.startsWith('--')) {
  process.stderr.write('usage: npm run pwned:verify -- STORE\n')
  process.exit(2)
}
try {
  const summary = verifyStore(paths[0]!)
  if (!summary.ok) {
    process.stderr.write(`pwned:verify: ${summary.store}: ${summary.problem}\n`)
    process.exit(1)
  }
  process.stdout.write(`${summary.store}: sound, ${summary.hashes.toLocaleString('en')} ${summary.kind === 'sha1' ? 'SHA-1' : 'NTLM'} hashes, checked in ${summary.seconds.toFixed(1)} s\n`)
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`pwned:verify: ${error.message}\n`)
    process.exit(1)
  }
  throw error
}

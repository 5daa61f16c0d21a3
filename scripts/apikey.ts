/**
 * `npm run apikey -- <name> [<requests per window>]`: mints an API key and prints it once, with the
 * line for API_KEYS_FILE. The key is `hk_` and 256 bits from the CSPRNG in base64url; the file
 * keeps only its sha256 (plugins/auth.ts), so a lost key is replaced, never recovered.
 */
import { randomBytes } from 'node:crypto'
import { KEY_NAME, keyLine } from '../src/plugins/auth.js'

const [name, max] = process.argv.slice(2)
if (name === undefined || !KEY_NAME.test(name) || (max !== undefined && !/^[1-9]\d{0,8}$/.test(max))) {
  process.stderr.write('usage: npm run apikey -- <name> [<requests per window>]\n' +
    '  name: 1 to 64 letters, digits, ".", "_" or "-"; requests per window overrides RATE_LIMIT_MAX for this key\n')
  process.exit(2)
}
const key = `hk_${randomBytes(32).toString('base64url')}`
process.stdout.write(`key:  ${key}\n` +
  `line: ${keyLine(name, key, max === undefined ? undefined : Number(max))}\n\n` +
  'Give the key to its user; add the line to API_KEYS_FILE and send SIGHUP to hashd (kill -HUP <pid>).\n' +
  'The key is shown only now: the file keeps its sha256.\n')

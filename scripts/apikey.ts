/**
 * `npm run apikey --silent -- <name> [<requests per window>]` (in the container image, where there is
 * no build step: `node dist/scripts/apikey.js <name>`): mints an API key and prints it once, with the
 * line for API_KEYS_FILE. The key is `hk_` and 256 bits from the CSPRNG in base64url; the file
 * keeps only its sha256 (src/keys/api-keys.ts), so a lost key is replaced, never recovered.
 *
 * stdout carries exactly two lines, the key and then the file line, so the output can be piped
 * (`… | tail -n 1 >> keys`); the advice for a person goes to stderr.
 */
import { randomBytes } from 'node:crypto'
import { KEY_NAME, keyLine } from '../src/keys/api-keys.js'

const [name, max] = process.argv.slice(2)
if (name === undefined || !KEY_NAME.test(name) || (max !== undefined && !/^[1-9]\d{0,8}$/.test(max))) {
  process.stderr.write('usage: npm run apikey -- <name> [<requests per window>]\n' +
    '  name: 1 to 64 letters, digits, ".", "_" or "-"; requests per window overrides RATE_LIMIT_MAX for this key\n')
  process.exit(2)
}
const key = `hk_${randomBytes(32).toString('base64url')}`
process.stdout.write(`${key}\n${keyLine(name, key, max === undefined ? undefined : Number(max))}\n`)
process.stderr.write('Line 1 is the key: give it to its user; it is shown only now (the file keeps its sha256).\n' +
  'Line 2 goes into API_KEYS_FILE: hashd sees the file change and loads it within seconds, without a restart or a signal\n' +
  '(SIGHUP to hashd\'s own process loads it at once, where a change is not seen: docs/operations.md, "Files read while running").\n')

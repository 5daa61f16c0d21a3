/**
 * `npm run audit:hash -- TEXT` (or the text on standard input; in the image
 * `node dist/scripts/audit-hash.js`): prints the form an input takes in the audit log,
 * `hmac-sha256:<hex>` under the audit key (AUDIT_KEY, or --key FILE), to search the log for a
 * message you know: `grep "$(npm run -s audit:hash -- 'the message')" audit.log`.
 *
 * The text is hashed as UTF-8, exactly as the request's JSON string held it (whatever its
 * inputEncoding). From standard input one final newline is dropped (`echo` adds one); --exact keeps it.
 * Exit status: 0 printed; 2 wrong arguments or a key that cannot be read.
 */
import { readFileSync } from 'node:fs'
import { openAuditKey, toolToken } from '../src/audit/key.js'
import { inputHash } from '../src/audit/line.js'
import { ConfigError } from '../src/config.js'

const USAGE = 'usage: npm run audit:hash -- [--key FILE] [--exact] [TEXT]   (no TEXT: read standard input; the key: --key or AUDIT_KEY)\n'

const args = process.argv.slice(2)
let keySource = process.env.AUDIT_KEY?.trim() || undefined
let exact = false
const texts: string[] = []
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  // After a `--` of its own, everything is text (a message that starts with --).
  if (arg === '--') { texts.push(...args.slice(i + 1)); break }
  if (arg === '--key') keySource = args[++i]
  else if (arg === '--exact') exact = true
  else if (arg.startsWith('--')) { process.stderr.write(`audit:hash: unknown option ${arg}\n${USAGE}`); process.exit(2) }
  else texts.push(arg)
}
if (keySource === undefined || texts.length > 1) {
  process.stderr.write(`${keySource === undefined ? 'audit:hash: no audit key: set AUDIT_KEY or pass --key FILE\n' : ''}${USAGE}`)
  process.exit(2)
}
let text = texts[0]
if (text === undefined) {
  text = readFileSync(0, 'utf8')
  if (!exact) text = text.replace(/\r?\n$/, '')
}
// With a pkcs11: AUDIT_KEY, the token of PKCS11_MODULE and PKCS11_PIN_FILE makes the MAC.
const token = toolToken()
try {
  process.stdout.write(`${await inputHash(await openAuditKey(keySource, token), text)}\n`)
  await token?.close()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  process.stderr.write(`audit:hash: ${error.message}\n`)
  process.exit(2)
}

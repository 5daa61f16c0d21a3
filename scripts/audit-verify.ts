/**
 * `npm run audit:verify -- LOG [LOG…] [--checkpoint FILE] [--key FILE]` (in the image:
 * `node dist/scripts/audit-verify.js …`): checks an audit log (src/audit/verify.ts) under the audit
 * key (AUDIT_KEY, or --key), and names the first line that was edited, removed, inserted or
 * reordered. Rotated files are given oldest first and checked as one chain. With --checkpoint, a
 * checkpoint saved from GET /api/audit/checkpoint (or the process log), it also says whether the log
 * was cut short before that checkpoint.
 *
 * Exit status: 0 the log verifies (a torn last line from a crash is reported, and still 0);
 * 1 it does not (the message names the line and what is wrong), or the checkpoint shows it cut short;
 * 2 wrong arguments, or a file or the key that cannot be read.
 */
import { readFileSync } from 'node:fs'
import { openAuditKey, toolToken, type AuditKey } from '../src/audit/key.js'
import { verifyLog } from '../src/audit/verify.js'
import { ConfigError } from '../src/config.js'

const USAGE = 'usage: npm run audit:verify -- LOG [LOG…] [--checkpoint FILE] [--key FILE]   (the key: --key or AUDIT_KEY)\n'

function usage(message?: string): never {
  process.stderr.write(`${message ? `audit:verify: ${message}\n` : ''}${USAGE}`)
  process.exit(2)
}

const args = process.argv.slice(2)
const logs: string[] = []
let checkpointFile: string | undefined
let keySource = process.env.AUDIT_KEY?.trim() || undefined
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  if (arg === '--checkpoint') checkpointFile = args[++i] ?? usage('--checkpoint needs a file')
  else if (arg === '--key') keySource = args[++i] ?? usage('--key needs a file')
  else if (arg.startsWith('--')) usage(`unknown option ${arg}`)
  else logs.push(arg)
}
if (logs.length === 0) usage()
if (keySource === undefined) usage('no audit key: set AUDIT_KEY or pass --key FILE')

// With a pkcs11: AUDIT_KEY, the token of PKCS11_MODULE and PKCS11_PIN_FILE makes the MACs.
const token = toolToken()
let key: AuditKey
let checkpoint: unknown
const files: { name: string, text: string }[] = []
try {
  key = await openAuditKey(keySource, token)
  for (const name of logs) files.push({ name, text: readFileSync(name, 'utf8') })
  if (checkpointFile !== undefined) {
    try {
      checkpoint = JSON.parse(readFileSync(checkpointFile, 'utf8'))
    } catch (error) {
      if (error instanceof SyntaxError) throw new ConfigError(`${checkpointFile} is not JSON (save the answer of GET /api/audit/checkpoint)`)
      throw error
    }
  }
} catch (error) {
  const message = error instanceof ConfigError ? error.message : `cannot read a file (${(error as NodeJS.ErrnoException).code ?? String(error)})`
  process.stderr.write(`audit:verify: ${message}\n`)
  process.exit(2)
}

const report = await verifyLog(files, key, checkpoint === undefined ? {} : { checkpoint })
await token?.close()
for (const warning of report.warnings) process.stderr.write(`audit:verify: note: ${warning}\n`)
if (report.problem) process.stderr.write(`audit:verify: ${report.problem.message}\n`)
if (report.checkpoint) process.stderr.write(`audit:verify: checkpoint: ${report.checkpoint.message}\n`)
if (!report.ok) {
  process.stderr.write(`audit:verify: NOT VERIFIED; ${report.lines} lines verified before the first problem\n`)
  process.exit(1)
}
process.stdout.write(`verified: ${report.lines} lines, seq ${report.firstSeq ?? '-'} to ${report.lastSeq ?? '-'}, head ${report.head ?? '-'}\n`)

/**
 * `npm run bank:import -- INPUT BANK --type pdq|tlsh|ssdeep|md5|sha1|sha256` (in the image:
 * `node dist/scripts/bank-import.js INPUT BANK --type TYPE`): a list of `hash[,id[,label]]` lines or
 * a CSV file with a header into a similarity bank file for SIMILARITY_BANKS_DIR. The work is
 * src/similarity/banks/import.ts; this reads the arguments and prints the summary.
 * Exit status: 0 done, 1 the input was refused (the message names the line), 2 wrong arguments.
 */
import { BANK_TYPES, BankImportError, importBank, isBankType, MAX_ID_BYTES, MAX_LABEL_BYTES } from '../src/similarity/banks/index.js'

const USAGE = `usage: npm run bank:import -- INPUT BANK --type ${BANK_TYPES.join('|')}\n` +
  '  INPUT  hash[,id[,label]] lines, or CSV whose header line names the hash, id and label columns\n' +
  `         (ids up to ${MAX_ID_BYTES} bytes, labels up to ${MAX_LABEL_BYTES}; an empty id is the line number)\n` +
  '  BANK   the bank file to write (replaced atomically; a running hashd reloads it)\n'

const args = process.argv.slice(2)
let type: string | undefined
const paths: string[] = []
const unknown: string[] = []
for (let at = 0; at < args.length; at++) {
  const arg = args[at]!
  if (arg === '--type') type = args[++at]
  else if (arg.startsWith('--type=')) type = arg.slice('--type='.length)
  else if (arg.startsWith('--')) unknown.push(arg)
  else paths.push(arg)
}
if (paths.length !== 2 || unknown.length > 0 || type === undefined || !isBankType(type)) {
  const why = unknown.length > 0 ? `unknown option ${unknown.join(', ')}\n`
    : type === undefined ? '--type is required\n'
      : !isBankType(type) ? `unknown type ${type}\n` : ''
  process.stderr.write(`${why}${USAGE}`)
  process.exit(2)
}
const [input, bank] = paths as [string, string]
const started = performance.now()
try {
  const summary = await importBank(input, bank, type)
  const seconds = (performance.now() - started) / 1000
  process.stdout.write(`${bank}: ${summary.count.toLocaleString('en')} ${type} entries from ${summary.lines.toLocaleString('en')} lines in ${seconds.toFixed(1)} s; ` +
    `${(summary.bytes / 1e6).toFixed(1)} MB\n  data SHA-256 ${summary.dataSha256}\n`)
} catch (error) {
  if (error instanceof BankImportError) {
    process.stderr.write(`bank:import: ${input}: ${error.message}\n`)
    process.exit(1)
  }
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    process.stderr.write(`bank:import: ${error.message}\n`)
    process.exit(1)
  }
  throw error
}

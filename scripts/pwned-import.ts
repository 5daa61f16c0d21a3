/**
 * `npm run pwned:import -- INPUT STORE [--ntlm] [--allow-missing]` (in the image:
 * `node dist/scripts/pwned-import.js INPUT STORE`): HIBP's downloader output (a folder of prefix
 * files or one ordered file) into a breached-password store for PWNED_STORE / PWNED_NTLM_STORE.
 * The work is src/screening/import.ts; this reads the arguments and prints the summary.
 * Exit status: 0 done, 1 the input was refused (the message says why), 2 wrong arguments.
 */
import { importPwned, ImportError } from '../src/screening/import.js'

const USAGE = 'usage: npm run pwned:import -- INPUT STORE [--ntlm] [--allow-missing]\n' +
  '  INPUT  the downloader\'s folder of XXXXX.txt prefix files, or one ordered HASH:COUNT file\n' +
  '  STORE  the store to write (replaced atomically; a running hashd reloads it)\n'

const args = process.argv.slice(2)
const flags = args.filter((arg) => arg.startsWith('--'))
const paths = args.filter((arg) => !arg.startsWith('--'))
const unknown = flags.filter((flag) => !['--ntlm', '--allow-missing'].includes(flag))
if (paths.length !== 2 || unknown.length > 0) {
  process.stderr.write(`${unknown.length > 0 ? `unknown option ${unknown.join(', ')}\n` : ''}${USAGE}`)
  process.exit(2)
}
const [input, store] = paths as [string, string]
try {
  const summary = importPwned(input, store, {
    kind: flags.includes('--ntlm') ? 'ntlm' : 'sha1',
    allowMissing: flags.includes('--allow-missing'),
    progress: (hashes) => { if (process.stderr.isTTY) process.stderr.write(`\r${hashes.toLocaleString('en')} hashes…`) },
  })
  if (process.stderr.isTTY) process.stderr.write('\r')
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`
  process.stdout.write(`${summary.store}: ${summary.hashes.toLocaleString('en')} ${summary.kind === 'sha1' ? 'SHA-1' : 'NTLM'} hashes from a ${summary.layout} ` +
    `(${mb(summary.inputBytes)} of text) in ${summary.seconds.toFixed(1)} s, ${(summary.hashesPerSecond / 1e6).toFixed(2)} M hashes/s; ` +
    `${mb(summary.bytes)}, ${summary.bytesPerHash.toFixed(2)} bytes per hash\n` +
    `  data date ${summary.dataDate}, data SHA-256 ${summary.dataSha256}` +
    `${summary.duplicatesMerged ? `, ${summary.duplicatesMerged} repeated hashes merged` : ''}` +
    `${summary.zeroCountLines ? `, ${summary.zeroCountLines} lines with count 0 left out` : ''}` +
    `${summary.missingPrefixFiles ? `, ${summary.missingPrefixFiles} prefix files missing` : ''}\n`)
} catch (error) {
  if (error instanceof ImportError) {
    process.stderr.write(`pwned:import: ${error.message}\n`)
    process.exit(1)
  }
  throw error
}

/**
 * `npm run pwned:corpus -- DIR [--hashes N] [--ntlm] [--layout folder|file] [--seed S]`: a
 * synthetic Pwned Passwords corpus in the layout HIBP's downloader writes, for tests and
 * `npm run bench`:
 * - `--layout folder` (the default): DIR/00000.txt … DIR/FFFFF.txt, each of `SUFFIX:COUNT` lines
 *   sorted by suffix, CRLF-separated without a final line end, as the range API answers them (a
 *   prefix that drew no hash has no file: with N well under 2^20 the folder is sparse, and
 *   `pwned:import` needs --allow-missing);
 * - `--layout file`: DIR/pwnedpasswords.txt (or pwnedpasswords_ntlm.txt), one `HASH:COUNT` line per
 *   hash, ordered by hash, CRLF line ends, as the downloader's single-file output.
 *
 * N random hashes (SHA-1 by default, NTLM with --ntlm) with counts drawn from a long-tailed
 * distribution (most 1 to 10, a few in the millions, so every count size of the store is used),
 * plus the hashes of the known passwords in DIR/known.tsv (`password<TAB>count` lines; a default
 * list when absent), each with the count given there. The same seed gives the same corpus.
 * Known passwords' hashes are computed here with node:crypto (SHA-1) and hash-wasm (MD4 for
 * NTLM); the tests check them with Python's hashlib and pycryptodome, not with this.
 */
import { createHash } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createMD4 } from 'hash-wasm'

export interface CorpusOptions {
  dir: string
  hashes: number
  kind: 'sha1' | 'ntlm'
  layout: 'folder' | 'file'
  seed: number
}

/** Known passwords and their counts when DIR/known.tsv does not give them (synthetic counts). */
export const DEFAULT_KNOWN: ReadonlyArray<readonly [string, number]> = [
  ['password', 9_545_824], ['123456', 42_000_000], ['correct horse battery staple', 384], ['Tr0ub4dor&3', 95],
  ['hunter2hunter2hunter2', 17], ['pässwörd-über-alles', 3], ['パスワードパスワード', 2], ['ｆｕｌｌｗｉｄｔｈｐａｓｓｗｏｒｄ', 11],
  ['a long passphrase nobody would guess', 1], ['count two hundred sixty nine', 269], ['count of sixty five thousand', 65_805],
  ['five billion and one', 5_000_000_001],
]

/** xoshiro128** (Blackman and Vigna), seeded with splitmix32: fast, and the same corpus for a seed. */
function generator(seed: number): () => number {
  let s = seed >>> 0
  const splitmix = () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
  let a = splitmix(), b = splitmix(), c = splitmix(), d = splitmix()
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0
    const t = b << 9
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t; d = rotl(d, 11)
    return result
  }
}
const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0

/** A long-tailed count: 1 most often, 10 or less nine times in ten, rarely millions. */
function drawCount(next: () => number): number {
  const u = (next() + 1) / 4294967297
  return Math.max(1, Math.floor(0.6 / u ** 0.9))
}

const UPPER_HEX = Buffer.from('0123456789ABCDEF')

export async function knownHashes(known: ReadonlyArray<readonly [string, number]>, kind: 'sha1' | 'ntlm'): Promise<Array<{ hash: Buffer, count: number }>> {
  const md4 = await createMD4()
  return known.map(([password, count]) => {
    if (kind === 'sha1') return { hash: createHash('sha1').update(password, 'utf8').digest(), count }
    md4.init()
    md4.update(Buffer.from(password, 'utf16le'))
    return { hash: Buffer.from(md4.digest('binary')), count }
  })
}

/** Reads DIR/known.tsv, or writes the default list there. */
function knownList(dir: string): Array<readonly [string, number]> {
  const file = join(dir, 'known.tsv')
  if (!existsSync(file)) {
    writeFileSync(file, DEFAULT_KNOWN.map(([password, count]) => `${password}\t${count}\n`).join(''))
    return [...DEFAULT_KNOWN]
  }
  return readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '').map((line) => {
    const [password = '', count = ''] = line.split('\t')
    return [password, Number(count)] as const
  })
}

export async function makeCorpus(options: CorpusOptions): Promise<{ hashes: number, files: number, bytes: number }> {
  const { dir, kind, layout } = options
  mkdirSync(dir, { recursive: true })
  const hashBytes = kind === 'sha1' ? 20 : 16
  const next = generator(options.seed)
  const known = await knownHashes(knownList(dir), kind)
  const knownByPrefix = new Map<number, Array<{ hash: Buffer, count: number }>>()
  for (const entry of known) {
    const prefix = (entry.hash[0]! << 12) | (entry.hash[1]! << 4) | (entry.hash[2]! >>> 4)
    knownByPrefix.set(prefix, [...knownByPrefix.get(prefix) ?? [], entry])
  }
  const prefixes = 1 << 20
  const lineBytes = hashBytes * 2 + 1 + 16 + 2
  let out = Buffer.allocUnsafe(16 * 1024 * 1024)
  let used = 0
  let total = 0
  let files = 0
  let bytes = 0
  const single = layout === 'file' ? openSync(join(dir, kind === 'sha1' ? 'pwnedpasswords.txt' : 'pwnedpasswords_ntlm.txt'), 'w') : -1
  const flush = () => {
    if (used === 0) return
    let done = 0
    while (done < used) done += writeSync(single, out, done, used - done)
    bytes += used
    used = 0
  }
  // Spread N over the prefixes: each gets floor(N / 2^20) or one more, in random places.
  const base = Math.floor(options.hashes / prefixes)
  const extra = options.hashes - base * prefixes
  const keys: Buffer[] = []
  for (let prefix = 0; prefix < prefixes; prefix++) {
    const n = base + (next() % prefixes < extra ? 1 : 0)
    keys.length = 0
    for (let index = 0; index < n; index++) {
      const hash = Buffer.allocUnsafe(hashBytes)
      for (let word = 0; word < hashBytes; word += 4) hash.writeUInt32BE(next(), word)
      hash[0] = prefix >>> 12
      hash[1] = (prefix >>> 4) & 0xff
      hash[2] = ((prefix & 0x0f) << 4) | (hash[2]! & 0x0f)
      keys.push(hash)
    }
    const counts = new Map<string, number>()
    for (const entry of knownByPrefix.get(prefix) ?? []) { keys.push(entry.hash); counts.set(entry.hash.toString('hex'), entry.count) }
    keys.sort(Buffer.compare)
    if (out.length - used < keys.length * lineBytes + 64) {
      if (single !== -1) flush()
      if (out.length < keys.length * lineBytes + 64) out = Buffer.allocUnsafe(keys.length * lineBytes * 2)
    }
    const start = used
    let previous: Buffer | undefined
    for (const hash of keys) {
      if (previous?.equals(hash)) continue
      previous = hash
      if (single === -1 && used > start) { out[used++] = 0x0d; out[used++] = 0x0a }
      // The whole hash in a single file; the 35 (27) digits after the prefix in a prefix file.
      for (let digit = single === -1 ? 5 : 0; digit < hashBytes * 2; digit++) {
        const byte = hash[digit >> 1]!
        out[used++] = UPPER_HEX[(digit & 1) === 0 ? byte >>> 4 : byte & 0x0f]!
      }
      out[used++] = 0x3a
      used += out.write(String(counts.get(hash.toString('hex')) ?? drawCount(next)), used, 'latin1')
      if (single !== -1) { out[used++] = 0x0d; out[used++] = 0x0a }
      total++
    }
    if (single === -1 && used > start) {
      const name = join(dir, `${prefix.toString(16).toUpperCase().padStart(5, '0')}.txt`)
      writeFileSync(name, out.subarray(start, used))
      bytes += used - start
      used = start
      files++
    }
  }
  if (single !== -1) { flush(); closeSync(single); files = 1 }
  return { hashes: total, files, bytes }
}

function usage(): never {
  process.stderr.write('usage: npm run pwned:corpus -- DIR [--hashes N] [--ntlm] [--layout folder|file] [--seed S]\n')
  process.exit(2)
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const dir = args.find((arg, index) => !arg.startsWith('--') && !['--hashes', '--layout', '--seed'].includes(args[index - 1] ?? ''))
  if (dir === undefined) usage()
  const option = (name: string) => { const at = args.indexOf(name); return at === -1 ? undefined : args[at + 1] }
  const hashes = Number(option('--hashes') ?? 100_000)
  const layout = option('--layout') ?? 'folder'
  const seed = Number(option('--seed') ?? 1)
  if (!Number.isInteger(hashes) || hashes < 0 || (layout !== 'folder' && layout !== 'file') || !Number.isInteger(seed)) usage()
  const started = performance.now()
  const made = await makeCorpus({ dir, hashes, kind: args.includes('--ntlm') ? 'ntlm' : 'sha1', layout, seed })
  const seconds = (performance.now() - started) / 1000
  process.stdout.write(`${dir}: ${made.hashes} hashes in ${made.files} file(s), ${made.bytes} bytes, ${seconds.toFixed(1)} s\n`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()

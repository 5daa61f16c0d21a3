/**
 * Opening a bank file (src/similarity/banks/open.ts, format.ts) and searching it: a damaged, cut or
 * foreign file must be refused with BankFileError, never crash or hang.
 *
 * Input: byte 0's low bit picks the mode, the rest is the file. Mode 1 first makes the header's
 * checksum and the data's SHA-256 right for the bytes that follow, so that the fuzzer reaches the
 * checks past them (the layout, the entry table, the records); mode 0 leaves the file as given.
 *
 * Invariants: an opened bank's count and type are its header's; a search at the widest threshold
 * answers at most `limit` matches, each with an id, and says truncated when there were more.
 *
 * Expected refusals: BankFileError naming the file (from openBank, or from a search reading a
 * damaged entry). Anything else thrown is a finding.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BankFileError, importBank, openBank, type BankType } from '../../src/similarity/banks/index.js'
import { invariant } from '../support.js'

const QUERIES: Record<BankType, string> = {
  pdq: 'f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22',
  tlsh: `T1${'A'.repeat(70)}`,
  ssdeep: '3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C',
  md5: 'd41d8cd98f00b204e9800998ecf8427e',
  sha1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
}
const WIDEST: Record<BankType, number> = { pdq: 256, tlsh: 10_000, ssdeep: 1, md5: 0, sha1: 0, sha256: 0 }

const work = mkdtempSync(join(tmpdir(), 'hashd-fuzz-bank-'))
process.once('exit', () => rmSync(work, { recursive: true, force: true }))
let counter = 0

export async function fuzz(data: Buffer): Promise<void> {
  if (data.length === 0) return
  const file = Buffer.from(data.subarray(1))
  if ((data[0]! & 1) === 1 && file.length >= 256) {
    createHash('sha256').update(file.subarray(256)).digest().copy(file, 80)
    createHash('sha256').update(file.subarray(0, 112)).digest().copy(file, 112)
  }
  const path = join(work, `bank-${counter++ % 4}.bank`)
  writeFileSync(path, file)
  let bank
  try {
    bank = await openBank(path)
  } catch (error) {
    if (error instanceof BankFileError && error.file === path) return
    throw error
  }
  try {
    invariant(bank.count === Number(file.readBigUInt64LE(16)), 'a count that is not the header\'s')
    const limit = 3
    let result
    try {
      result = bank.search(QUERIES[bank.type], { threshold: WIDEST[bank.type], limit })
    } catch (error) {
      if (error instanceof BankFileError && error.file === path) return
      throw error
    }
    invariant(result.matches.length <= limit, `${result.matches.length} matches for a limit of ${limit}`)
    invariant(result.truncated === (bank.type === 'pdq' || bank.type === 'tlsh' ? bank.count > limit : result.truncated), 'truncated wrong at the widest threshold')
    for (const match of result.matches) invariant(typeof match.id === 'string', 'a match without an id')
  } finally {
    bank.close()
  }
}

/** Seeds (fuzz/make-corpus.ts): a small bank of each type, in both modes. */
export async function seeds(): Promise<Array<[string, Buffer]>> {
  const out: Array<[string, Buffer]> = []
  const dir = mkdtempSync(join(tmpdir(), 'hashd-fuzz-bank-seeds-'))
  try {
    for (const [type, lines] of [
      ['pdq', [`${QUERIES.pdq},a,label`, `${'0'.repeat(64)},b`, `${'f'.repeat(64)}`]],
      ['tlsh', [`${QUERIES.tlsh},a`, `T1${'B'.repeat(70)},b,"x, y"`]],
      ['ssdeep', [`${QUERIES.ssdeep},a`, '6:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C,b', '3:ab:c']],
      ['md5', [`${QUERIES.md5},a`, `${QUERIES.md5},b`]],
      ['sha1', [`${QUERIES.sha1},a`]],
      ['sha256', [`${QUERIES.sha256},a,é`]],
    ] as Array<[BankType, string[]]>) {
      const input = join(dir, `${type}.txt`)
      const output = join(dir, `${type}.bank`)
      writeFileSync(input, `${lines.join('\n')}\n`)
      await importBank(input, output, type, { now: new Date(Date.UTC(2026, 0, 1)) })
      const bytes = readFileSync(output)
      out.push([`${type} bank as imported`, Buffer.concat([Buffer.from([0]), bytes])])
      out.push([`${type} bank, checksums remade`, Buffer.concat([Buffer.from([1]), bytes])])
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  out.push(['empty', Buffer.from([0])])
  return out
}

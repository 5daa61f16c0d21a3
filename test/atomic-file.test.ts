/**
 * src/atomic-file.ts, the one writer of files a server swaps in whole (pwned:import, bank:import)
 * and the one seal of their headers. The data's SHA-256 and the header checksum are checked with
 * coreutils `sha256sum` on the bytes as written, not with the module's own hashing; a reader that
 * has the old file open keeps reading the old file after the rename, as rename(2) promises; a
 * failed write leaves the target and the folder as they were. pwned-store.test.ts and
 * similarity-banks.test.ts check the two formats made through it.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { AtomicFileWriter, checkHeaderSeal, newHeader, sealHeader, type HeaderSeal } from '../src/atomic-file.js'
import { importBank } from '../src/similarity/banks/index.js'
import { skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-atomic-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** coreutils' SHA-256 of `length` bytes of a file from `offset` (all of the rest without a length). */
function sha256sum(file: string, offset: number, length?: number): string {
  const command = `tail -c +${offset + 1} "$0"${length === undefined ? '' : ` | head -c ${length}`} | sha256sum`
  return execFileSync('sh', ['-c', command, file], { encoding: 'utf8' }).split(' ')[0]!
}

const SEAL: HeaderSeal = { magic: Buffer.from('HASHDTST', 'latin1'), version: 3, bytes: 64, summed: 24 }
const REFUSALS = { notThisFormat: 'not a test file', otherVersion: (version: number) => `version ${version}` }
const refuse = (reason: string) => new Error(reason)

describe('atomic file', () => {
  it('writes the data after the header\'s room, sums it as sha256sum does, and puts the file in place in one rename', { skip: skipUnless('sha256sum') }, () => {
    const target = join(dir, 'store.bin')
    writeFileSync(target, 'the old version')
    const reader = openSync(target, 'r')
    const file = new AtomicFileWriter(target, { dataOffset: SEAL.bytes, temporaryTag: 'writing' })
    assert.equal(file.temporary, join(dir, `.store.bin.writing-${process.pid}`))
    const parts = [Buffer.from('first part, '), Buffer.alloc(100_000, 0x61), Buffer.from(' and the end')]
    for (const part of parts) file.appendData(part)
    assert.equal(file.dataLength, parts.reduce((sum, part) => sum + part.length, 0))
    const dataSha256 = file.dataSha256()
    const header = newHeader(SEAL)
    dataSha256.copy(header, 12, 0, 12)
    file.writeAt(sealHeader(SEAL, header), 0)
    file.finish()
    assert.equal(readFileSync(target, 'utf8'), 'the old version', 'the target is untouched until replaceTarget')
    file.replaceTarget()

    const written = readFileSync(target)
    assert.equal(written.length, SEAL.bytes + file.dataLength)
    assert.deepEqual(written.subarray(SEAL.bytes), Buffer.concat(parts))
    assert.equal(sha256sum(target, SEAL.bytes), dataSha256.toString('hex'))
    assert.equal(sha256sum(target, 0, SEAL.summed), written.subarray(SEAL.summed, SEAL.summed + 32).toString('hex'), 'the seal is the SHA-256 of the bytes before it')
    assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith('.')), [], 'no temporary file left')
    // A reader of the old version still reads it whole: the rename replaced the name, not the file.
    const old = Buffer.alloc(64)
    assert.equal(old.subarray(0, readSync(reader, old, 0, 64, 0)).toString(), 'the old version')
    closeSync(reader)
  })

  it('abandon leaves the target as it was and removes the temporary file; a finished file takes no more writes', () => {
    const target = join(dir, 'kept.bin')
    writeFileSync(target, 'in force')
    const file = new AtomicFileWriter(target, { dataOffset: 0, temporaryTag: 'tmp' })
    file.appendData(Buffer.from('half a new version'))
    file.abandon()
    assert.equal(readFileSync(target, 'utf8'), 'in force')
    assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith('.kept.bin')), [])

    const finished = new AtomicFileWriter(target, { dataOffset: 0, temporaryTag: 'tmp' })
    assert.throws(() => finished.replaceTarget(), /renamed before it is finished/)
    finished.finish()
    assert.throws(() => finished.appendData(Buffer.from('late')), /written after it was finished/)
    finished.abandon()
    assert.equal(readFileSync(target, 'utf8'), 'in force')
  })

  it('the seal refuses another magic, another version and any changed byte it covers, in that order', () => {
    const header = sealHeader(SEAL, newHeader(SEAL))
    header.writeUInt32LE(0xdead_beef, 16)
    assert.throws(() => checkHeaderSeal(SEAL, header, REFUSALS, refuse), /header checksum does not match/)
    sealHeader(SEAL, header)
    checkHeaderSeal(SEAL, header, REFUSALS, refuse)
    // Bytes after the checksum are not covered (reserved room).
    header[SEAL.bytes - 1] = 1
    checkHeaderSeal(SEAL, header, REFUSALS, refuse)
    const otherVersion = Buffer.from(header)
    otherVersion.writeUInt32LE(4, 8)
    assert.throws(() => checkHeaderSeal(SEAL, otherVersion, REFUSALS, refuse), /^Error: version 4$/)
    const otherMagic = Buffer.from(otherVersion)
    otherMagic[0] = 0x58
    assert.throws(() => checkHeaderSeal(SEAL, otherMagic, REFUSALS, refuse), /^Error: not a test file$/)
  })

  it('a bank made through it carries the seal and the data SHA-256 sha256sum computes (format.ts: 112 summed bytes, data from 256)', { skip: skipUnless('sha256sum') }, async () => {
    const input = join(dir, 'list.csv')
    writeFileSync(input, 'f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b20,case-1\n')
    const bank = join(dir, 'photos.bank')
    const summary = await importBank(input, bank, 'pdq')
    const bytes = readFileSync(bank)
    assert.equal(sha256sum(bank, 256), summary.dataSha256)
    assert.equal(sha256sum(bank, 0, 112), bytes.subarray(112, 144).toString('hex'))
  })
})

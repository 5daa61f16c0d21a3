/**
 * Files that a running server swaps in whole (the breached-password store, similarity banks): one
 * way to write them and one way to seal and check their header, so that every such file is made
 * and refused alike.
 *
 * **Writing.** AtomicFileWriter writes beside the target under a temporary name (a dot file of the
 * same folder, so the rename stays within one file system, where POSIX rename(2) replaces the
 * target in one step): the data first, appended and summed into a SHA-256 as it goes, then what
 * the caller writes at fixed places (an index, the header, last, so that a file cut short never
 * has a complete header). `finish` fsyncs and closes it; the caller then opens and checks the
 * temporary file as a server would, and `replaceTarget` renames it over the target. A reader
 * watching the folder (file-reload.ts) sees the old file or the new one, never a half-written one.
 * On any failure `abandon` removes the temporary file and the target is untouched.
 *
 * **The header's seal.** Both formats open with an 8-byte magic and a u32 little-endian format
 * version at offset 8, and keep the SHA-256 of the header's first `summed` bytes right after them,
 * so a damaged header is told apart from a damaged body before any field of it is believed.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { createHash, type Hash } from 'node:crypto'
import { basename, dirname, join } from 'node:path'

export interface AtomicFileOptions {
  /** Where the data starts: the bytes before it (header, index) are written with writeAt. */
  dataOffset: number
  /** The temporary file is `.<target's name>.<tag>-<pid>` beside the target (what .gitignore and the folder readers pass over). */
  temporaryTag: string
  /** The new file's mode; 0o644 by default (readable by the server's user, whoever imported it). */
  mode?: number
}

export class AtomicFileWriter {
  readonly target: string
  readonly temporary: string
  readonly #dataOffset: number
  readonly #dataHash: Hash = createHash('sha256')
  #fd: number | null
  #dataLength = 0

  constructor(target: string, options: AtomicFileOptions) {
    this.target = target
    this.temporary = join(dirname(target), `.${basename(target)}.${options.temporaryTag}-${process.pid}`)
    this.#dataOffset = options.dataOffset
    this.#fd = openSync(this.temporary, 'w', options.mode ?? 0o644)
  }

  /** Bytes of data written so far. */
  get dataLength(): number { return this.#dataLength }

  /** Appends to the data and to its SHA-256. */
  appendData(bytes: Uint8Array): void {
    this.writeAt(bytes, this.#dataOffset + this.#dataLength)
    this.#dataHash.update(bytes)
    this.#dataLength += bytes.length
  }

  /** The SHA-256 of every byte appended; the data is complete once this is asked. */
  dataSha256(): Buffer {
    return this.#dataHash.digest()
  }

  /** Writes bytes at a fixed place outside the data (an index, the header): not summed. */
  writeAt(bytes: Uint8Array, position: number): void {
    const fd = this.#open()
    let done = 0
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done)
  }

  /** Syncs and closes the temporary file: it is whole on disk, ready to be checked before replaceTarget. */
  finish(): void {
    const fd = this.#open()
    fsyncSync(fd)
    this.#fd = null
    closeSync(fd)
  }

  /** Renames the finished temporary file over the target, in one step. */
  replaceTarget(): void {
    if (this.#fd !== null) throw new Error(`${this.temporary} is renamed before it is finished`)
    renameSync(this.temporary, this.target)
  }

  /** Closes and removes the temporary file; the target is left as it was. */
  abandon(): void {
    if (this.#fd !== null) {
      try { closeSync(this.#fd) } catch { /* already closed by the system: nothing to release */ }
      this.#fd = null
    }
    rmSync(this.temporary, { force: true })
  }

  #open(): number {
    if (this.#fd === null) throw new Error(`${this.temporary} is written after it was finished or abandoned`)
    return this.#fd
  }
}

/** Where a format keeps its magic, version and header checksum. */
export interface HeaderSeal {
  /** At offset 0. */
  magic: Buffer
  /** The format version this code writes and reads, a u32 little-endian at offset 8. */
  version: number
  /** The header's length. */
  bytes: number
  /** The checksum covers bytes 0 to summed − 1 and is stored at `summed` (32 bytes). */
  summed: number
}

/** What a header of another kind or another version is told (the file's own format's words). */
export interface SealRefusals {
  /** The magic is not this format's. */
  notThisFormat: string
  /** The version is not the one this code reads. */
  otherVersion: (version: number) => string
}

/** A new header: zeros, with the magic and the version in place. */
export function newHeader(seal: HeaderSeal): Buffer {
  const bytes = Buffer.alloc(seal.bytes)
  seal.magic.copy(bytes, 0)
  bytes.writeUInt32LE(seal.version, 8)
  return bytes
}

/** Fills in the header's checksum once every field is written; returns the header. */
export function sealHeader(seal: HeaderSeal, bytes: Buffer): Buffer {
  createHash('sha256').update(bytes.subarray(0, seal.summed)).digest().copy(bytes, seal.summed)
  return bytes
}

/**
 * Checks the magic, the version and the checksum, in that order, of a header at least `seal.bytes`
 * long (the caller checks the length, which it words with the file's size). Throws what `refuse`
 * makes of the reason.
 */
export function checkHeaderSeal(seal: HeaderSeal, bytes: Buffer, refusals: SealRefusals, refuse: (reason: string) => Error): void {
  if (!bytes.subarray(0, seal.magic.length).equals(seal.magic)) throw refuse(refusals.notThisFormat)
  const version = bytes.readUInt32LE(8)
  if (version !== seal.version) throw refuse(refusals.otherVersion(version))
  const summed = createHash('sha256').update(bytes.subarray(0, seal.summed)).digest()
  if (!summed.equals(bytes.subarray(seal.summed, seal.summed + 32))) throw refuse('its header checksum does not match (the header is damaged)')
}

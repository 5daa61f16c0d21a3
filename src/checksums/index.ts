/**
 * Checking downloads against the checksum list their project publishes: the signature first (when
 * one is given), then the list (list.ts), then each uploaded file through the hashers its lines
 * name (check.ts, over the upload pipeline). No line is read before the signature has verified.
 */
import type { ChecksumLimits } from '../config.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import { algorithmFor } from '../domain/algorithm-lookup.js'
import { problems } from '../problem.js'
import { ChecksumCheck, type CheckReport } from './check.js'
import { parseChecksumList } from './list.js'
import { isClearsigned, readClearsigned, signifyEmbeddedMessage, signatureScheme, verifySignature, type SignatureResult } from './signatures/index.js'

export { ChecksumCheck, reportAsText, type CheckReport, type UploadPlan } from './check.js'

/** Largest detached signature read (an OpenPGP signature with its subpackets is well under 1 KiB; minisign's is ~300 bytes). */
export const MAX_SIGNATURE_BYTES = 64 * 1024
/** Largest public key read (an exported OpenPGP key with its certifications can run to tens of KiB). */
export const MAX_PUBLIC_KEY_BYTES = 256 * 1024

/** What the request gave before its first file. */
export interface ChecksumInputs {
  list?: Buffer
  /** The list part's file name, which may hint at its untagged lines' algorithm. */
  listName?: string
  algorithm?: string
  strict: boolean
  signature?: Buffer
  publicKey?: Buffer
}

export interface StartedCheck {
  check: ChecksumCheck
  signature?: SignatureResult
}

export type ChecksumAnswer = CheckReport & { signature?: SignatureResult }

/**
 * Verifies the signature, if any, then parses the list. A signify signature made with `-e` carries
 * the list itself, which then needs no `checksums` field; a clearsigned list carries its signature.
 * Throws a 4xx problem, before anything is
 * hashed, for a missing list, a signature without a key (or a key without a signature), a bad
 * signature or the wrong key, and a list with no usable line.
 */
export async function startCheck(inputs: ChecksumInputs, limits: ChecksumLimits): Promise<StartedCheck> {
  if (inputs.list && isClearsigned(inputs.list)) return startClearsigned(inputs.list, inputs, limits)
  if ((inputs.signature === undefined) !== (inputs.publicKey === undefined)) {
    const missing = inputs.signature === undefined ? 'signature' : 'publicKey'
    throw problems.validation('A signature is checked with its public key: send both signature and publicKey, or neither',
      [{ pointer: `/body/${missing}`, message: 'required with the other' }])
  }
  let list = inputs.list
  if (list === undefined && inputs.signature && signatureScheme(inputs.signature)?.scheme === 'signify') {
    list = signifyEmbeddedMessage(inputs.signature) ?? undefined
  }
  if (list === undefined) throw problems.validation('The form has no "checksums" list', [{ pointer: '/body/checksums', message: 'required' }])
  if (list.length > limits.maxListBytes) throw problems.tooLarge(`The checksum list is larger than MAX_CHECKSUM_LIST_BYTES (${limits.maxListBytes} bytes)`)
  // A bad algorithm name is refused before the signature is checked.
  untaggedAlgorithm(inputs)
  // The signature covers the list's bytes exactly as sent: verified before a line is read.
  const signature = inputs.signature && inputs.publicKey ? await verifySignature(list, inputs.signature, inputs.publicKey) : undefined
  return begin(list.toString('utf8'), inputs, limits, signature)
}

function untaggedAlgorithm(inputs: ChecksumInputs): DigestAlgorithm | undefined {
  return inputs.algorithm === undefined || inputs.algorithm.trim() === ''
    ? undefined
    : algorithmFor(inputs.algorithm.trim(), 'filehash', 'algorithm') as DigestAlgorithm
}

function begin(text: string, inputs: ChecksumInputs, limits: ChecksumLimits, signature: SignatureResult | undefined): StartedCheck {
  const algorithm = untaggedAlgorithm(inputs)
  const parsed = parseChecksumList(text, {
    maxLines: limits.maxLines,
    ...(algorithm ? { algorithm } : {}),
    ...(inputs.listName ? { listName: inputs.listName } : {}),
  })
  return { check: new ChecksumCheck(parsed), ...(signature ? { signature } : {}) }
}

/**
 * A clearsigned list (`gpg --clearsign`, Fedora's CHECKSUM files) carries its own signature: with
 * `publicKey` it is verified before its text is read; without one its text is read unverified.
 */
async function startClearsigned(list: Buffer, inputs: ChecksumInputs, limits: ChecksumLimits): Promise<StartedCheck> {
  if (inputs.signature !== undefined) {
    throw problems.validation('The checksum list is clearsigned: it carries its own signature, so send it without a signature part',
      [{ pointer: '/body/signature', message: 'not with a clearsigned list' }])
  }
  if (list.length > limits.maxListBytes) throw problems.tooLarge(`The checksum list is larger than MAX_CHECKSUM_LIST_BYTES (${limits.maxListBytes} bytes)`)
  untaggedAlgorithm(inputs)
  const { text, signature } = await readClearsigned(list, inputs.publicKey)
  return begin(text, inputs, limits, signature)
}

export function answer(started: StartedCheck, strict: boolean): ChecksumAnswer {
  const report = started.check.report(strict)
  return started.signature ? { ...report, signature: started.signature } : report
}

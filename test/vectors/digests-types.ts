/**
 * The shape of a published digest vector. Every vector names where it was published; inputs are
 * text (UTF-8), hex bytes, a repeated text, or the BLAKE3 test-vector pattern (bytes 0..250, repeating).
 */
export type VectorInput =
  | { text: string }
  | { hex: string }
  | { repeat: string, times: number }
  | { pattern251: number }

export interface DigestVector {
  algorithm: string
  input: VectorInput
  /** Hex of the digest (or the algorithm's standard text form, for mysql41). */
  expected: string
  /** Output length in bytes, for XOFs. */
  outputLength?: number
  source: string
}

export function inputBytes(input: VectorInput): Buffer {
  if ('text' in input) return Buffer.from(input.text, 'utf8')
  if ('hex' in input) return Buffer.from(input.hex, 'hex')
  if ('repeat' in input) return Buffer.from(input.repeat.repeat(input.times), 'utf8')
  return Buffer.from(Array.from({ length: input.pattern251 }, (_, i) => i % 251))
}

/** The FIPS 180 / FIPS 202 example messages. */
export const MSG_448 = 'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'
export const MSG_896 = 'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu'
export const MILLION_A = { repeat: 'a', times: 1_000_000 } as const
/** The RFC 1319/1320/1321 Appendix A.5 suite. */
export const RFC13XX_SUITE = ['', 'a', 'abc', 'message digest', 'abcdefghijklmnopqrstuvwxyz',
  'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', '1234567890'.repeat(8)]

/** Pairs each suite message with its expected digest. */
export function suite(algorithm: string, source: string, messages: string[], digests: string[]): DigestVector[] {
  return messages.map((text, i) => ({ algorithm, input: { text }, expected: digests[i] as string, source }))
}

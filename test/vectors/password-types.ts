/** The shape of a published password-hash vector: the hash, its password, and where it was published. */
export interface PasswordVector {
  hash: string
  /** The password as text, or as hex when `inputEncoding` is `hex` (8-bit and binary passwords). */
  input: string
  inputEncoding?: 'hex'
  /** The canonical scheme name hashd should report. */
  algorithm: string
  source: string
}

/**
 * Identify: the likely formats of a hash string, ranked by a calibrated confidence.
 * (First release: the formats hashd produces and bare digests by length; the format table in
 * formats.ts is data.)
 */
import { detectPasswordScheme, digestsByOutputBytes } from '../algorithms/registry.js'
import { Problem } from '../problem.js'

export interface IdentifyMatch {
  algorithm: string
  displayName: string
  confidence: number
  hashcat: number | null
  john: string | null
  category: string
  description: string
  params?: Record<string, number | string>
  verifiable: boolean
}

export interface Identification {
  length: number
  matches: IdentifyMatch[]
}

/** Popularity prior for bare hex digests of each length: md5 first for 32 characters, etc. */
const HEX_PRIORS: Record<string, { weight: number, hashcat: number | null, john: string | null }> = {
  md5: { weight: 60, hashcat: 0, john: 'raw-md5' },
  ntlm: { weight: 20, hashcat: 1000, john: 'nt' },
  md4: { weight: 5, hashcat: 900, john: 'raw-md4' },
  sha1: { weight: 60, hashcat: 100, john: 'raw-sha1' },
  ripemd160: { weight: 5, hashcat: 6000, john: 'ripemd-160' },
  sha256: { weight: 60, hashcat: 1400, john: 'raw-sha256' },
  'sha3-256': { weight: 8, hashcat: 17400, john: 'raw-sha3' },
  'keccak-256': { weight: 8, hashcat: 17800, john: 'raw-keccak-256' },
  sha512: { weight: 60, hashcat: 1700, john: 'raw-sha512' },
  'sha3-512': { weight: 8, hashcat: 17600, john: 'raw-sha3' },
  sha384: { weight: 30, hashcat: 10800, john: 'raw-sha384' },
  sha224: { weight: 30, hashcat: 1300, john: 'raw-sha224' },
}

export function identify(text: string): Identification {
  const hash = text.trim()
  const matches: IdentifyMatch[] = []
  const scheme = detectPasswordScheme(hash)
  if (scheme) {
    try {
      const parsed = scheme.parse(hash)
      matches.push({
        algorithm: parsed.scheme, displayName: scheme.displayName, confidence: 0.99, hashcat: null, john: null,
        category: 'Password hash', description: `${scheme.displayName} (${parsed.format})`, params: parsed.params, verifiable: true,
      })
    } catch (error) {
      if (!(error instanceof Problem)) throw error
    }
  } else if (/^[0-9a-fA-F]+$/.test(hash) && hash.length % 2 === 0) {
    const candidates = digestsByOutputBytes(hash.length / 2)
    const weights = candidates.map((digest) => HEX_PRIORS[digest.name]?.weight ?? 1)
    const total = weights.reduce((sum, weight) => sum + weight, 0) * 1.05
    candidates.forEach((digest, index) => {
      const prior = HEX_PRIORS[digest.name]
      matches.push({
        algorithm: digest.name, displayName: digest.displayName, confidence: (weights[index] ?? 1) / total,
        hashcat: prior?.hashcat ?? null, john: prior?.john ?? null, category: 'Raw hash', description: `${digest.displayName} digest, hex`, verifiable: true,
      })
    })
  }
  matches.sort((a, b) => b.confidence - a.confidence || a.algorithm.localeCompare(b.algorithm))
  return { length: hash.length, matches }
}

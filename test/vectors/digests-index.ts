/** Every published digest vector, by family. */
import { blakeVectors } from './digests-blake.js'
import { checksumVectors } from './digests-checksums.js'
import { credentialVectors } from './digests-credentials.js'
import { gostVectors } from './digests-gost.js'
import { legacyVectors } from './digests-legacy.js'
import { mdVectors } from './digests-md.js'
import { shaVectors } from './digests-sha.js'
import { sha3Vectors } from './digests-sha3.js'
import type { DigestVector } from './digests-types.js'

export const vectorFamilies: Record<string, DigestVector[]> = {
  'SHA-1/SHA-2': shaVectors,
  'SHA-3/SHAKE/Keccak': sha3Vectors,
  'MD2/MD4/MD5': mdVectors,
  'BLAKE2/BLAKE3': blakeVectors,
  'RIPEMD/Whirlpool/SM3/Tiger/HAS-160': legacyVectors,
  'Streebog/GOST94': gostVectors,
  'checksums': checksumVectors,
  'credentials': credentialVectors,
}

export const allDigestVectors: DigestVector[] = Object.values(vectorFamilies).flat()

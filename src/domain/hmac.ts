/** /api/hmac: HMAC (RFC 2104) of a message under a key, over any digest with a block size. */
import type { DigestAlgorithm } from '../algorithms/types.js'
import { problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import { decodeInput, encodeOutput, type InputEncoding, type OutputEncoding } from './encoding.js'
import type { Engine } from './engine.js'
import { countHashedBytes } from '../observe.js'

export interface HmacRequest {
  message: string
  key: string
  algorithm?: string
  encoding?: OutputEncoding
  keyEncoding?: InputEncoding
  inputEncoding?: InputEncoding
}

export interface HmacResult {
  hmac: string
  algorithm: string
  encoding: OutputEncoding
  processingTimeMs: number
}

export async function hmac(engine: Engine, request: HmacRequest): Promise<HmacResult> {
  const algorithm = algorithmFor(request.algorithm ?? 'sha256', 'hmac') as DigestAlgorithm
  const key = decodeInput(request.key, request.keyEncoding ?? 'utf8', 'key')
  if (key.length === 0) throw problems.validation('key must not be empty', [{ pointer: '/body/key', message: 'must not be empty' }])
  const message = decodeInput(request.message, request.inputEncoding ?? 'utf8', 'message')
  const encoding = request.encoding ?? 'hex'
  const { value, ms } = await engine.run<Uint8Array>({ op: 'hmac', algorithm: algorithm.name, key, message })
  countHashedBytes('hmac', algorithm.name, message.length)
  return { hmac: encodeOutput(value, encoding), algorithm: algorithm.name, encoding, processingTimeMs: ms }
}

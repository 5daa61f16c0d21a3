/**
 * How much memory a pool task declares, for the admission in pool.ts. Memory-hard schemes declare
 * what their parameters make them allocate; everything else is cheap next to them and counts as a
 * small constant.
 */
import { passwordSchemeNamed } from '../algorithms/registry.js'
import type { CostParams } from '../algorithms/types.js'
import { yescryptCostParams } from '../algorithms/password/crypt.js'
import { scryptMemoryBytes } from '../algorithms/password/scrypt.js'
import type { Task } from './tasks.js'

/** bcrypt's 4 KiB state, SHA-crypt, PBKDF2, digests of inputs already in memory: well under this. */
export const SMALL_TASK_BYTES = 1024 * 1024

/**
 * argon2: m KiB (RFC 9106 §3.1: m kibibytes of blocks). scrypt and `$7$`: 128·N·r bytes
 * (RFC 7914 §6). yescrypt: the same 128·N·r for its N and r, or those its libxcrypt cost stands for.
 */
export function paramsMemoryBytes(params: CostParams): number {
  if (params.memoryCost !== undefined) return params.memoryCost * 1024
  if (params.N !== undefined && params.r !== undefined) return scryptMemoryBytes(params.N, params.r)
  return SMALL_TASK_BYTES
}

export function declaredMemoryBytes(task: Task): number {
  switch (task.op) {
    case 'password-hash': {
      // yescrypt's options name a libxcrypt cost, which stands for an N and r.
      const { cost } = task.options
      const yescrypt = task.scheme === 'yescrypt' || task.scheme === 'gost-yescrypt'
      const params = yescrypt && cost !== undefined ? yescryptCostParams(cost) : task.options
      return Math.max(SMALL_TASK_BYTES, paramsMemoryBytes(params))
    }
    case 'password-verify': {
      // The route parsed this hash already; parsing again is cheap next to the work it admits.
      try {
        return Math.max(SMALL_TASK_BYTES, paramsMemoryBytes(passwordSchemeNamed(task.scheme).parse(task.hash).params))
      } catch {
        return SMALL_TASK_BYTES
      }
    }
    // The text (up to twice the bytes, UTF-16) and the parsed strings beside the body.
    case 'json': return Math.max(SMALL_TASK_BYTES, task.input.length * 4)
    // The pixels (at most 512 × 512 × 3 bytes), and two float luminance buffers of 4 bytes a pixel.
    case 'pdq': return Math.max(SMALL_TASK_BYTES, task.input.length * 4)
    default: return SMALL_TASK_BYTES
  }
}

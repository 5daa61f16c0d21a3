/**
 * The CPU-heavy work hashd sends to worker threads, and the code that runs it there. It is the
 * same code the event loop would run; only where it runs differs (see pool.ts).
 */
import { createHmac } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { digestNamed, passwordSchemeNamed } from '../algorithms/registry.js'
import type { CostParams, DigestAlgorithm, Hasher } from '../algorithms/types.js'
import { parseJsonBody } from '../domain/json-body.js'
import { knownProblem } from '../problem.js'
import { pdqHash } from '../similarity/pdq/hash.js'

export type Task =
  | { op: 'password-hash', scheme: string, input: Uint8Array, options: CostParams }
  | { op: 'password-verify', scheme: string, input: Uint8Array, hash: string }
  | { op: 'digest', algorithm: string, input: Uint8Array, outputBytes: number }
  | { op: 'hmac', algorithm: string, key: Uint8Array, message: Uint8Array }
  /** A content hash of a whole input (src/content-hashes), its parameters resolved by the registry: the text its store shows. */
  | { op: 'content-hash', name: string, params: Record<string, string | number>, input: Uint8Array }
  /** A large JSON request body (plugins/body.ts), parsed off the event loop. */
  | { op: 'json', input: Uint8Array }
  /** PDQ of decoded pixels (similarity/pdq): the result as JSON text. */
  | { op: 'pdq', input: Uint8Array, width: number, height: number, channels: 1 | 3, dihedral: boolean }

/** A parsed JSON body, boxed: the value may itself be a string or a boolean. */
export interface ParsedJson { json: unknown }

export type TaskValue = string | boolean | Uint8Array | ParsedJson

/** Problems cross the thread boundary as plain data; class identity does not survive cloning. */
export type TaskOutcome =
  | { ok: true, value: TaskValue, ms: number }
  | { ok: false, problem: { status: number, type: string, title: string, detail: string } }

/** Digests a whole input with one algorithm; `outputBytes` matters only for XOFs. */
export async function digest(algorithm: DigestAlgorithm, input: Uint8Array, outputBytes: number): Promise<Uint8Array> {
  const hasher = await algorithm.create(outputBytes)
  hasher.update(input)
  return hasher.digest()
}

/** HMAC (RFC 2104): OpenSSL's where it has the hash, else the construction over our own Hasher. */
export async function hmac(algorithm: DigestAlgorithm, key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  if (algorithm.opensslName) return createHmac(algorithm.opensslName, key).update(message).digest()
  const blockBytes = algorithm.blockBytes
  if (blockBytes === undefined) throw new Error(`${algorithm.name} has no HMAC`)
  const newHasher = async (): Promise<Hasher> => algorithm.create(algorithm.outputBytes)
  // RFC 2104 §2: keys longer than B are hashed first; then K is zero-padded to B bytes.
  const shortKey = key.length > blockBytes ? await digest(algorithm, key, algorithm.outputBytes) : key
  const padded = new Uint8Array(blockBytes)
  padded.set(shortKey)
  const inner = await newHasher()
  inner.update(padded.map((byte) => byte ^ 0x36))
  inner.update(message)
  const innerDigest = inner.digest()
  const outer = await newHasher()
  outer.update(padded.map((byte) => byte ^ 0x5c))
  outer.update(innerDigest)
  return outer.digest()
}

async function perform(task: Task): Promise<TaskValue> {
  switch (task.op) {
    case 'password-hash': return passwordSchemeNamed(task.scheme).hash(task.input, task.options)
    case 'password-verify': return passwordSchemeNamed(task.scheme).verify(task.input, task.hash)
    case 'digest': return digest(digestNamed(task.algorithm), task.input, task.outputBytes)
    case 'hmac': return hmac(digestNamed(task.algorithm), task.key, task.message)
    case 'content-hash': return contentHash(task.name, task.params, task.input)
    case 'json': return { json: parseJsonBody(task.input) }
    case 'pdq': return JSON.stringify(pdqHash({ data: task.input, width: task.width, height: task.height, channels: task.channels }, { dihedral: task.dihedral }))
  }
}

/** Imported on first use, as the hash threads do (upload/hash-thread.ts): most workers never compute one. */
let contentRegistry: Promise<typeof import('../content-hashes/index.js')> | undefined

async function contentHash(name: string, params: Record<string, string | number>, input: Uint8Array): Promise<string> {
  contentRegistry ??= import('../content-hashes/index.js')
  const entry = (await contentRegistry).findContentHash(name)
  if (entry === undefined) throw new Error(`no content hash ${name}`)
  const hasher = await entry.create(params)
  hasher.update(input)
  return hasher.finish()
}

/** Runs a task and measures the hashing work itself; known problems become data, bugs are rethrown. */
export async function runTask(task: Task): Promise<TaskOutcome> {
  const started = performance.now()
  try {
    const value = await perform(task)
    return { ok: true, value, ms: performance.now() - started }
  } catch (error) {
    const problem = knownProblem(error)
    if (!problem) throw error
    return { ok: false, problem: { status: problem.status, type: problem.type, title: problem.title, detail: problem.detail } }
  }
}

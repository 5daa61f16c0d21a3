/**
 * Shared settings and checks of the property-based tests (fast-check) against the real server.
 * Runs are bounded and reproducible: a fixed seed and HASHD_FUZZ_RUNS cases per property (200 by
 * default; more for a deeper search, with HASHD_FUZZ_SEED to explore other seeds). fast-check
 * reports a failure with its seed, path and shrunk counterexample, so it can be replayed.
 */
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import fc from 'fast-check'
import { FUZZ_RUNS_DEFAULT, FUZZ_SEED_DEFAULT } from '../../scripts/fuzz-defaults.js'

export const FUZZ_RUNS = Math.max(1, Number(process.env.HASHD_FUZZ_RUNS ?? FUZZ_RUNS_DEFAULT) || FUZZ_RUNS_DEFAULT)
export const FUZZ_SEED = Number(process.env.HASHD_FUZZ_SEED ?? FUZZ_SEED_DEFAULT) || FUZZ_SEED_DEFAULT

/** Parameters for fc.assert: the fixed seed, and `share` of FUZZ_RUNS cases (at least one). */
export function fuzzParameters(share = 1): fc.Parameters<unknown> {
  return { seed: FUZZ_SEED, numRuns: Math.max(1, Math.round(FUZZ_RUNS * share)) }
}

/** The rule of the fuzz suite: every answer is 2xx, or 4xx as RFC 9457 problem+json whose status matches. */
export function assertCleanAnswer(status: number, contentType: string | null, body: string, context: string): void {
  assert.ok((status >= 200 && status < 300) || (status >= 400 && status < 500), `${context}: status ${status} ${body.slice(0, 300)}`)
  if (status >= 400) {
    assert.match(contentType ?? '', /^application\/problem\+json/, `${context}: ${status} with content-type ${contentType}`)
    const problem = JSON.parse(body) as { status?: unknown, title?: unknown }
    assert.equal(problem.status, status, `${context}: problem status`)
    assert.equal(typeof problem.title, 'string', `${context}: problem title`)
  }
}

/** After each case: the server is alive and answers a cheap request (a deadline for liveness, not a timing). */
export async function assertAlive(url: string): Promise<void> {
  const response = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(10_000) })
  assert.equal(response.status, 200)
  await response.text()
}

export interface RawAnswer { status: number, contentType: string | null, body: string }

/**
 * Sends bytes over a fresh TCP connection and reads one HTTP/1.1 answer, if any. `finish` says what
 * the client does after writing: `end` half-closes (no more bytes will come), `destroy` aborts.
 * Resolves with null when the server closed without answering or nothing came before `waitMs`.
 */
export function rawExchange(port: number, bytes: Buffer, finish: 'end' | 'destroy' | 'keep', waitMs = 10_000): Promise<RawAnswer | null> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let settled = false
    const settle = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(parseAnswer(Buffer.concat(chunks)))
    }
    const timer = setTimeout(settle, waitMs)
    socket.on('error', settle)
    socket.on('close', settle)
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      const answer = parseAnswer(Buffer.concat(chunks))
      if (answer && Buffer.byteLength(answer.body) >= answer.declaredLength) settle()
    })
    socket.on('connect', () => {
      socket.write(bytes, () => {
        if (finish === 'end') socket.end()
        else if (finish === 'destroy') { socket.destroy(); settle() }
      })
    })
  })
}

function parseAnswer(data: Buffer): (RawAnswer & { declaredLength: number }) | null {
  const text = data.toString('latin1')
  const headEnd = text.indexOf('\r\n\r\n')
  if (headEnd === -1) return null
  const head = text.slice(0, headEnd).split('\r\n')
  const status = /^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')
  if (!status) return null
  const header = (name: string) => head.find((line) => line.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim() ?? null
  const body = data.subarray(Buffer.byteLength(text.slice(0, headEnd + 4), 'latin1')).toString('utf8')
  return { status: Number(status[1]), contentType: header('content-type'), body, declaredLength: Number(header('content-length') ?? 0) }
}

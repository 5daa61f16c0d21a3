/**
 * A request written piece by piece over node:http, for tests that need full control of the
 * headers and of how the body is cut (fetch adds a Content-Type to some bodies and picks its own
 * framing).
 */
import { request as httpRequest, type Agent } from 'node:http'
import { whichever } from './events.js'
import type { CheckedResponse } from './openapi.js'

export interface SentAnswer { status: number, /** Content-Type */ type: string, /** The body as text. */ text: string }

/**
 * Sends `pieces` in one request, one write each (waiting for `drain` when a write fills the
 * socket), by default over a fresh connection so that a refused upload's unsent body cannot reach
 * the next request; `agent` sends it as a client with a pool of kept-alive connections would.
 * Stops writing once the server has answered: it may answer early (a 413, a 400) and close.
 * Rejects when the connection fails before the answer has been read whole.
 */
export function sendInPieces(url: string, method: string, headers: Record<string, string>, pieces: readonly Buffer[], agent: Agent | false = false): Promise<SentAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false
    const request = httpRequest(url, { method, headers, agent }, (response) => {
      answered = true
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { text += chunk })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type'] ?? ''), text }))
      response.on('error', reject)
    })
    request.on('error', (error) => { if (!answered) reject(error) })
    void (async () => {
      for (const piece of pieces) {
        if (answered) return
        if (!request.write(piece)) await whichever(request, 'drain', 'close')
      }
      request.end()
    })().catch(() => { /* the server may close the connection after answering early */ })
  })
}

export interface AnswerFrom {
  status: number
  headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  text: string
}

/**
 * POSTs JSON to `url` from the loopback address `localAddress` (127.0.0.2, 127.0.0.3, …: the
 * kernel routes all of 127.0.0.0/8 to this machine), so that a server on 127.0.0.1 sees several
 * clients with addresses of their own, as it would see several hosts. `check` is given the
 * response as the OpenAPI checker takes it (HashdProcess.check); a server started in this process
 * checks every response itself.
 */
export function postFrom(localAddress: string, url: string, body: unknown, check?: (response: CheckedResponse) => void): Promise<AnswerFrom> {
  const json = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'POST', localAddress, agent: false,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) },
    }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { text += chunk })
      response.on('end', () => {
        const status = response.statusCode ?? 0
        check?.({ method: 'POST', url: new URL(url).pathname, status, headers: response.headers, body: text })
        let parsed: unknown = text
        try { parsed = JSON.parse(text) } catch { /* not JSON */ }
        const headers = new Headers()
        for (const [name, value] of Object.entries(response.headers)) for (const each of [value ?? []].flat()) headers.append(name, each)
        resolve({ status, headers, body: parsed, text })
      })
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end(json)
  })
}

/**
 * The page's only way to the server: the public API, with the same requests a user would send
 * with curl. Problems (RFC 9457) become ApiError with the field errors keyed by the last segment
 * of their JSON pointer (`/body/input` → `input`), so each form shows them next to the field.
 *
 * API keys: when the server answers 401 with `WWW-Authenticate: Bearer`, the page asks for a key
 * (askForKey), keeps it in sessionStorage (gone when the tab closes) and sends it as
 * `Authorization: Bearer <key>` from then on.
 */

const KEY_STORAGE = 'hashd.apiKey'

export interface FieldErrors { [field: string]: string }

export class ApiError extends Error {
  readonly status: number
  readonly fields: FieldErrors
  /** Seconds to wait, from Retry-After on a 429 or 503. */
  readonly retryAfter: number | null

  constructor(status: number, message: string, fields: FieldErrors = {}, retryAfter: number | null = null) {
    super(message)
    this.status = status
    this.fields = fields
    this.retryAfter = retryAfter
  }
}

interface Problem {
  title?: string
  detail?: string
  errors?: Array<{ pointer?: string, message?: string }>
}

let keyPrompt: ((reason: string) => Promise<string | null>) | null = null

/** The App registers the dialog that asks for an API key. */
export function onKeyNeeded(prompt: (reason: string) => Promise<string | null>): void {
  keyPrompt = prompt
}

function storedKey(): string | null {
  try { return sessionStorage.getItem(KEY_STORAGE) } catch { return null }
}

export function forgetKey(): void {
  try { sessionStorage.removeItem(KEY_STORAGE) } catch { /* storage disabled */ }
}

function withAuth(headers: Record<string, string>): Record<string, string> {
  const key = storedKey()
  return key ? { ...headers, authorization: `Bearer ${key}` } : headers
}

function retryAfterSeconds(value: string | null): number | null {
  if (value === null) return null
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds))
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

/** Turns a non-2xx answer into an ApiError; `body` is the response text. */
export function toApiError(status: number, body: string, retryAfterHeader: string | null): ApiError {
  let problem: Problem = {}
  try { problem = JSON.parse(body) as Problem } catch { /* not JSON */ }
  const fields: FieldErrors = {}
  for (const error of problem.errors ?? []) {
    // `/body/input` → input, `/body/options/cost` → cost, `/body/hashes/3` → hashes, `/querystring/expected` → expected.
    const segments = (error.pointer ?? '').split('/').filter(Boolean).slice(1)
    const field = segments[0] === 'options' ? segments[1] : segments[0]
    if (field && error.message && !(field in fields)) fields[field] = `${problem.detail ?? error.message}`
  }
  const retryAfter = retryAfterSeconds(retryAfterHeader)
  let message = problem.detail ?? problem.title ?? `The server answered ${status}`
  if (status === 429) {
    const when = retryAfter === null ? 'in a moment' : `in ${retryAfter} s (at ${new Date(Date.now() + retryAfter * 1000).toLocaleTimeString()})`
    message = `Too many requests: try again ${when}.`
  }
  return new ApiError(status, message, fields, retryAfter)
}

/**
 * The key prompt on screen, shared by every request that meets a 401 while it is open: the dialog
 * holds one request for a key at a time, and at start-up several requests (the algorithm list, the
 * HMAC tab's named keys) meet their 401 together. Each waits for the one answer and repeats itself.
 */
let openPrompt: Promise<string | null> | null = null

/**
 * Whether to repeat a request that got `status` (having sent `sentKey`): after a 401 with a Bearer
 * challenge, once a key is at hand. A key entered since the request left is used without asking.
 */
async function needKey(status: number, challenge: string | null, sentKey: string | null): Promise<boolean> {
  if (status !== 401 || !keyPrompt || !/^\s*Bearer\b/i.test(challenge ?? '')) return false
  const current = storedKey()
  if (current !== null && current !== sentKey) return true
  const prompt = keyPrompt
  openPrompt ??= prompt(sentKey !== null ? 'The server refused the API key. Enter another one.' : 'This server needs an API key.')
    .finally(() => { openPrompt = null })
  const key = await openPrompt
  if (!key) return false
  try { sessionStorage.setItem(KEY_STORAGE, key) } catch { /* storage disabled: the key lasts this request only */ }
  return true
}

/** One JSON request; on 401 asks for a key once and repeats it. */
export async function api<T>(path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const sentKey = storedKey()
    const init: RequestInit = body === undefined
      ? { method: 'GET', headers: withAuth({ accept: 'application/json' }) }
      : { method: 'POST', headers: withAuth({ 'content-type': 'application/json', accept: 'application/json' }), body: JSON.stringify(body) }
    if (signal) init.signal = signal
    let response: Response
    try {
      response = await fetch(path, init)
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error
      throw new ApiError(0, 'The server could not be reached.')
    }
    const text = await response.text()
    if (response.ok) return JSON.parse(text) as T
    if (attempt < 3 && await needKey(response.status, response.headers.get('www-authenticate'), sentKey)) continue
    throw toApiError(response.status, text, response.headers.get('retry-after'))
  }
}

export interface UploadProgress { loaded: number, total: number, startedAt: number }

/** One part of a multipart form: a text field, or a file (a Blob with its file name). */
export type FormPart = readonly [name: string, value: string] | readonly [name: string, value: Blob, filename: string]

/**
 * A multipart upload with progress. XMLHttpRequest, because fetch reports no upload progress; each
 * File goes into the FormData as is, so the browser streams it from disk and the page never reads
 * it into memory. The parts go in the order given (the text fields first, as the upload routes require).
 */
export function upload<T>(path: string, fields: Array<[string, string]>, file: File, onProgress: (progress: UploadProgress) => void, signal: AbortSignal): Promise<T> {
  return uploadForm<T>(path, [...fields, ['file', file, file.name]], file.size, onProgress, signal)
}

export function uploadForm<T>(path: string, parts: readonly FormPart[], totalBytes: number, onProgress: (progress: UploadProgress) => void, signal: AbortSignal): Promise<T> {
  const send = (): Promise<{ status: number, text: string, challenge: string | null, retryAfter: string | null, sentKey: string | null }> => new Promise((resolve, reject) => {
    const form = new FormData()
    for (const part of parts) {
      if (part.length === 3) form.append(part[0], part[1], part[2])
      else form.append(part[0], part[1])
    }
    const request = new XMLHttpRequest()
    const startedAt = performance.now()
    request.open('POST', path)
    request.setRequestHeader('accept', 'application/json')
    const key = storedKey()
    if (key) request.setRequestHeader('authorization', `Bearer ${key}`)
    request.upload.onprogress = (event) => onProgress({ loaded: event.loaded, total: event.lengthComputable ? event.total : totalBytes, startedAt })
    request.onload = () => resolve({ status: request.status, text: request.responseText, challenge: request.getResponseHeader('www-authenticate'), retryAfter: request.getResponseHeader('retry-after'), sentKey: key })
    request.onerror = () => reject(new ApiError(0, 'The upload failed: the server could not be reached or closed the connection.'))
    request.onabort = () => reject(new DOMException('Upload cancelled', 'AbortError'))
    signal.addEventListener('abort', () => request.abort(), { once: true })
    request.send(form)
  })
  return (async () => {
    for (let attempt = 0; ; attempt++) {
      const answer = await send()
      if (answer.status >= 200 && answer.status < 300) return JSON.parse(answer.text) as T
      if (attempt < 3 && await needKey(answer.status, answer.challenge, answer.sentKey)) continue
      throw toApiError(answer.status, answer.text, answer.retryAfter)
    }
  })()
}

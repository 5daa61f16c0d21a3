/**
 * Check a webhook: POST /api/webhooks/verify with the headers and body as a receiver got them
 * (pasted from a request log or a provider's delivery page) and the secret, public key or named
 * key. It sends `remember: false`: checking a webhook by hand looks for a replay without spending
 * the webhook's id, so the real receiver still accepts it. The verdict is written out, never
 * colour alone, with the reason in words.
 */
import { useState } from 'preact/hooks'
import { api, ApiError } from '../api'
import { Field, FormStatus, IDLE, Select, TextArea, describedBy, failure, type RequestState } from '../components'

interface WebhookAnswer {
  valid: boolean, reason?: string, detail?: string, keyName?: string, keyVersion?: number, timestamp?: number, replayed: boolean
}

/** The profiles the server verifies (its OpenAPI enum), with the headers each reads. */
const PROFILES = [
  { value: 'standard-webhooks', label: 'Standard Webhooks', headers: 'webhook-id, webhook-timestamp, webhook-signature', publicKey: true },
  { value: 'github', label: 'GitHub', headers: 'X-Hub-Signature-256', publicKey: false },
  { value: 'stripe', label: 'Stripe', headers: 'Stripe-Signature', publicKey: false },
] as const

const KEY_KINDS = {
  secret: { label: 'Secret', field: 'secret', hint: 'As the provider shows it: whsec_… for Standard Webhooks and Stripe, the text you set for GitHub' },
  publicKey: { label: 'Public key (v1a)', field: 'publicKey', hint: 'The sender\'s Ed25519 public key: whpk_… or PEM' },
  keyName: { label: 'Named key', field: 'keyName', hint: 'A key of the server\'s key ring kept for webhooks (HMAC_KEYS_FILE, purpose=webhooks)' },
} as const
type KeyKind = keyof typeof KEY_KINDS

const REASONS: Record<string, string> = {
  'missing-header': 'A header is missing',
  'malformed-header': 'A header is malformed',
  'unsupported-signature': 'No signature of the kind this key checks',
  'signature-mismatch': 'The signature does not match',
  'key-version-retired': 'Signed with a retired key version',
  'key-version-below-minimum': 'Signed with a key version below the minimum',
  'timestamp-too-old': 'Too old',
  'timestamp-too-new': 'Timestamp in the future',
  replayed: 'Already seen (a replay)',
}

/** `Name: value` lines into an object; a name given twice becomes an array, which the server refuses for its own headers. */
export function parseHeaderLines(text: string): { headers: Record<string, string | string[]> } | { error: string } {
  const headers: Record<string, string | string[]> = {}
  const lines = text.split(/\r?\n/)
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue
    const colon = line.indexOf(':')
    if (colon <= 0) return { error: `Line ${index + 1} is not "Name: value"` }
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    const existing = headers[name]
    headers[name] = existing === undefined ? value : [existing, value].flat()
  }
  if (Object.keys(headers).length === 0) return { error: 'Paste the headers the webhook came with, one "Name: value" a line' }
  return { headers }
}

/** A Unix time in seconds from seconds or an ISO 8601 date, or null. */
function readTime(text: string): number | null {
  const trimmed = text.trim()
  if (/^\d{1,11}$/.test(trimmed)) return Number(trimmed)
  const parsed = Date.parse(trimmed)
  return Number.isNaN(parsed) ? null : Math.floor(parsed / 1000)
}

export function WebhookTab() {
  const [profile, setProfile] = useState<string>('standard-webhooks')
  const [headerText, setHeaderText] = useState('')
  const [payload, setPayload] = useState('')
  const [payloadEncoding, setPayloadEncoding] = useState('utf8')
  const [keyKind, setKeyKind] = useState<KeyKind>('secret')
  const [key, setKey] = useState('')
  const [tolerance, setTolerance] = useState('300')
  const [receivedAt, setReceivedAt] = useState('')
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<WebhookAnswer | null>(null)
  const chosen = PROFILES.find((each) => each.value === profile) ?? PROFILES[0]
  const kinds = (Object.keys(KEY_KINDS) as KeyKind[]).filter((kind) => kind !== 'publicKey' || chosen.publicKey)

  const submit = async (event: Event) => {
    event.preventDefault()
    setResult(null)
    const parsed = parseHeaderLines(headerText)
    const local: Record<string, string> = {}
    if ('error' in parsed) local.headers = parsed.error
    const seconds = tolerance.trim() === '' ? undefined : Number(tolerance)
    if (seconds !== undefined && !(Number.isInteger(seconds) && seconds >= 1)) local.toleranceSeconds = 'Whole seconds, at least 1'
    const received = receivedAt.trim() === '' ? undefined : readTime(receivedAt)
    if (received === null) local.receivedAt = 'Unix seconds, or a date such as 2025-01-31T12:00:00Z'
    if (Object.keys(local).length > 0 || 'error' in parsed) {
      setState({ busy: false, fields: local, message: null })
      return
    }
    setState({ ...IDLE, busy: true })
    const body: Record<string, unknown> = {
      profile, headers: parsed.headers, remember: false,
      [payloadEncoding === 'base64' ? 'payloadBase64' : 'payload']: payloadEncoding === 'base64' ? payload.trim() : payload,
      [KEY_KINDS[keyKind].field]: keyKind === 'secret' ? key : key.trim(),
    }
    if (seconds !== undefined) body.toleranceSeconds = seconds
    if (received !== undefined) body.receivedAt = received
    try {
      setResult(await api<WebhookAnswer>('/api/webhooks/verify', body))
      setState(IDLE)
    } catch (error) {
      const next = failure(error, ['headers', 'payload', 'payloadBase64', 'secret', 'publicKey', 'keyName', 'toleranceSeconds', 'receivedAt', 'profile'])
      // The payload and key errors name the API's field; show them by the field on the page.
      if (next.fields.payloadBase64) next.fields.payload = next.fields.payloadBase64
      const keyError = next.fields.secret ?? next.fields.publicKey ?? next.fields.keyName
      if (keyError) next.fields.key = keyError
      if (error instanceof ApiError && error.status === 503 && !next.message) next.message = error.message
      setState(next)
    }
  }

  const when = (seconds: number) => `${new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')} (${seconds})`

  return (
    <form onSubmit={submit} noValidate>
      <h2>Check a webhook</h2>
      <p class="meta">Paste a webhook as your receiver got it: the headers and the exact body. Checking here does not spend its id, so your receiver still accepts it.</p>
      <div class="row">
        <Select id="webhook-profile" label="Sender" value={profile} options={PROFILES.map((each) => [each.value, each.label] as const)}
          onChange={(value) => { setProfile(value); if (value !== 'standard-webhooks' && keyKind === 'publicKey') setKeyKind('secret') }} error={state.fields.profile} />
      </div>
      <TextArea id="webhook-headers" label="Headers" value={headerText} onInput={setHeaderText} error={state.fields.headers} rows={4} mono
        hint={`One "Name: value" a line; ${chosen.label} reads ${chosen.headers}. Other headers may stay.`} />
      <div class="row">
        <TextArea id="webhook-payload" label="Body" value={payload} onInput={setPayload} error={state.fields.payload} rows={5} mono />
        <Select id="webhook-payload-encoding" label="Body encoding" value={payloadEncoding}
          options={[['utf8', 'text (UTF-8)'], ['base64', 'base64 (exact bytes)']]} onChange={setPayloadEncoding} />
      </div>
      <div class="row">
        <Select id="webhook-key-kind" label="Key" value={keyKind} options={kinds.map((kind) => [kind, KEY_KINDS[kind].label] as const)} onChange={(value) => setKeyKind(value as KeyKind)} />
        {keyKind === 'publicKey'
          ? <TextArea id="webhook-key" label={KEY_KINDS.publicKey.label} value={key} onInput={setKey} error={state.fields.key} hint={KEY_KINDS.publicKey.hint} rows={2} mono />
          : (
            <Field id="webhook-key" label={KEY_KINDS[keyKind].label} error={state.fields.key} hint={KEY_KINDS[keyKind].hint} class="grow">
              {keyKind === 'keyName'
                ? <input {...describedBy('webhook-key', state.fields.key, true)} type="text" class="mono" autocomplete="off" spellcheck={false} value={key} onInput={(event) => setKey(event.currentTarget.value)} />
                : <input {...describedBy('webhook-key', state.fields.key, true)} type="password" class="mono" autocomplete="off" spellcheck={false} value={key} onInput={(event) => setKey(event.currentTarget.value)} />}
            </Field>
          )}
      </div>
      <div class="row">
        <Field id="webhook-tolerance" label="Tolerance (seconds)" error={state.fields.toleranceSeconds}>
          <input {...describedBy('webhook-tolerance', state.fields.toleranceSeconds)} type="number" min="1" step="1" inputMode="numeric" value={tolerance}
            onInput={(event) => setTolerance(event.currentTarget.value)} />
        </Field>
        <Field id="webhook-received-at" label="Received at (optional)" error={state.fields.receivedAt}
          hint="For a webhook read later from a queue: when it arrived, in Unix seconds or as a date. Empty: now.">
          <input {...describedBy('webhook-received-at', state.fields.receivedAt, true)} type="text" autocomplete="off" spellcheck={false} value={receivedAt}
            onInput={(event) => setReceivedAt(event.currentTarget.value)} />
        </Field>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy}>Check webhook</button>
        {state.busy && <span class="busy" aria-live="polite">Working…</span>}
      </div>
      <FormStatus state={state} />
      {result && (
        <div class={`result verdict ${result.valid ? 'match' : 'no-match'}`} role="status">
          <p class="verdict-text"><span aria-hidden="true">{result.valid ? '✓' : '✗'}</span> {result.valid ? 'Valid' : `Not valid: ${REASONS[result.reason ?? ''] ?? result.reason}`}</p>
          {result.detail && <p class="webhook-detail">{result.detail}.</p>}
          <dl class="facts">
            {result.timestamp !== undefined && (<><dt>Signed at</dt><dd class="mono">{when(result.timestamp)}</dd></>)}
            {result.keyName !== undefined && (<><dt>Key</dt><dd class="mono">{result.keyName}{result.keyVersion !== undefined ? ` version ${result.keyVersion}` : ''}</dd></>)}
            <dt>Seen before</dt>
            <dd>{result.replayed ? 'yes: the server already accepted this webhook' : 'no'}</dd>
          </dl>
        </div>
      )}
    </form>
  )
}

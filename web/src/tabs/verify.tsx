/**
 * Verify: POST /api/verify; the answer is written out as "Match" or "No match", never colour alone.
 * "Upgrade" sends `"upgrade": true`: a match that should be rehashed comes back with `newHash`,
 * made under the server's password policy, shown for copying in place of the old hash.
 */
import { useEffect, useState } from 'preact/hooks'
import type { AlgorithmInfo } from '../algorithms'
import { api } from '../api'
import { AlgorithmPicker, FormStatus, IDLE, INPUT_ENCODINGS, Output, Select, TextArea, failure, type RequestState } from '../components'

/** What "Verify with this" on the Identify tab hands over; `at` makes each hand-over new. */
export interface VerifyPrefill { hash: string, algorithm: string | null, at: number }

interface VerifyAnswer {
  match: boolean, algorithm: string | null, format?: string, processingTimeMs: number,
  rehashRecommended: boolean, reason?: string, warnings: string[], pepperKey?: string, newHash?: string
}

export function VerifyTab(props: { algorithms: AlgorithmInfo[] | null, prefill: VerifyPrefill | null }) {
  const [input, setInput] = useState('')
  const [inputEncoding, setInputEncoding] = useState('utf8')
  const [hash, setHash] = useState('')
  const [algorithm, setAlgorithm] = useState('')
  const [upgrade, setUpgrade] = useState(false)
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<VerifyAnswer | null>(null)

  useEffect(() => {
    if (!props.prefill) return
    setHash(props.prefill.hash)
    setAlgorithm(props.prefill.algorithm ?? '')
    setResult(null)
    setState(IDLE)
    document.getElementById('verify-input')?.focus()
  }, [props.prefill])

  const submit = async (event: Event) => {
    event.preventDefault()
    setState({ ...IDLE, busy: true })
    setResult(null)
    const body: Record<string, unknown> = { input, hash: hash.trim(), inputEncoding }
    if (algorithm) body.algorithm = algorithm
    if (upgrade) body.upgrade = true
    try {
      setResult(await api<VerifyAnswer>('/api/verify', body))
      setState(IDLE)
    } catch (error) {
      setState(failure(error, ['input', 'hash', 'algorithm', 'inputEncoding']))
    }
  }

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">Verify</h2>
      <TextArea id="verify-input" label="Input" value={input} onInput={setInput} error={state.fields.input} rows={3} />
      <TextArea id="verify-hash" label="Hash" value={hash} onInput={setHash} error={state.fields.hash} rows={2} mono
        hint="A password hash ($2b$…, $argon2id$…, {SSHA}…) or a digest in hex or base64" />
      <div class="row">
        <Select id="verify-input-encoding" label="Input encoding" value={inputEncoding} options={INPUT_ENCODINGS} onChange={setInputEncoding} error={state.fields.inputEncoding} />
        <AlgorithmPicker id="verify-algorithm" algorithms={props.algorithms} operation="verify" value={algorithm} onChange={setAlgorithm}
          error={state.fields.algorithm} auto="Detect from the hash" />
      </div>
      <p class="check">
        <label>
          <input id="verify-upgrade" type="checkbox" checked={upgrade} onChange={(event) => setUpgrade(event.currentTarget.checked)} />
          {' '}Upgrade: on a match that should be rehashed, also make a new hash under the server's password policy
        </label>
      </p>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy || props.algorithms === null}>Verify</button>
        {state.busy && <span class="busy" aria-live="polite">Working…</span>}
      </div>
      <FormStatus state={state} />
      {result && (
        <div class={`result verdict ${result.match ? 'match' : 'no-match'}`} role="status">
          <p class="verdict-text"><span aria-hidden="true">{result.match ? '✓' : '✗'}</span> {result.match ? 'Match' : 'No match'}</p>
          <dl class="facts">
            <dt>Detected format</dt>
            <dd>{result.algorithm ?? 'none of the candidates matched'}{result.format ? ` (${result.format})` : ''}</dd>
            {result.pepperKey !== undefined && (<><dt>Pepper key</dt><dd class="mono">{result.pepperKey}</dd></>)}
            <dt>Server time</dt>
            <dd>{result.processingTimeMs.toFixed(1)} ms</dd>
          </dl>
          {result.rehashRecommended && (
            <p class="advice"><strong>Rehash recommended:</strong> {result.reason ?? 'the scheme or its parameters are below current recommendations'}.</p>
          )}
          {result.newHash !== undefined && (
            <Output id="verify-new-hash" label="New hash: store it in place of the old one" value={result.newHash} />
          )}
          {upgrade && result.match && !result.rehashRecommended && <p class="meta">Nothing to upgrade: the hash already meets the server's policy.</p>}
          {result.warnings.length > 0 && (
            <div class="warnings">
              <h3>Warnings</h3>
              <ul>{result.warnings.map((warning) => <li key={warning}>{warning}</li>)}</ul>
            </div>
          )}
        </div>
      )}
    </form>
  )
}

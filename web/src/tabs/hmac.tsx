/**
 * HMAC: POST /api/hmac with the message and either your own key (and its encoding) or a key the
 * server holds (GET /api/keys lists them: name, versions, states), optionally tagged with its
 * version (`hashd:v3:…`); and "Check HMAC": POST /api/hmac/verify of an HMAC against the same
 * message and key, answered in words ("Valid" / "Not valid"), with the version it is valid under
 * and whether it should be made again under the current version.
 */
import { useEffect, useState } from 'preact/hooks'
import type { AlgorithmInfo } from '../algorithms'
import { api } from '../api'
import { AlgorithmPicker, FormStatus, IDLE, INPUT_ENCODINGS, OUTPUT_ENCODINGS, Output, Select, TextArea, failure, type RequestState } from '../components'

interface HmacAnswer { hmac: string, algorithm: string, encoding: string, format?: string, keyName?: string, keyVersion?: number, processingTimeMs: number }
interface CheckAnswer { valid: boolean, algorithm: string, keyName?: string, keyVersion?: number | null, rotateRecommended: boolean, reason?: string }
interface ServerKey { name: string, purpose: 'hmac' | 'webhooks', algorithms: string[], currentVersion: number, versions: Array<{ version: number, state: string, verifies: boolean }> }

const FIELDS = ['message', 'key', 'keyName', 'keyVersion', 'algorithm', 'encoding', 'keyEncoding', 'inputEncoding', 'hmac', 'format']

export function HmacTab(props: { algorithms: AlgorithmInfo[] | null }) {
  const [message, setMessage] = useState('')
  const [messageEncoding, setMessageEncoding] = useState('utf8')
  const [source, setSource] = useState<'own' | 'server'>('own')
  const [key, setKey] = useState('')
  const [keyEncoding, setKeyEncoding] = useState('utf8')
  const [serverKeys, setServerKeys] = useState<ServerKey[]>([])
  const [keyName, setKeyName] = useState('')
  const [keyVersion, setKeyVersion] = useState('')
  const [tagged, setTagged] = useState(false)
  const [algorithm, setAlgorithm] = useState('sha256')
  const [encoding, setEncoding] = useState('hex')
  const [toCheck, setToCheck] = useState('')
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<HmacAnswer | null>(null)
  const [checked, setChecked] = useState<CheckAnswer | null>(null)

  // The server's named keys for HMACs, if it has any and this caller may list them; without, only
  // "your own key". Keys kept for webhooks (purpose=webhooks) are refused here, so not offered.
  useEffect(() => {
    api<{ hmac: ServerKey[] }>('/api/keys').then((keys) => {
      const forHmac = keys.hmac.filter((each) => each.purpose === 'hmac')
      setServerKeys(forHmac)
      const first = forHmac[0]
      if (first) {
        setKeyName(first.name)
        setAlgorithm(first.algorithms[0] ?? 'sha256')
      }
    }, () => setServerKeys([]))
  }, [])

  const chosen = serverKeys.find((each) => each.name === keyName)
  const chooseKey = (name: string) => {
    setKeyName(name)
    setKeyVersion('')
    const algorithms = serverKeys.find((each) => each.name === name)?.algorithms ?? []
    if (!algorithms.includes(algorithm)) setAlgorithm(algorithms[0] ?? 'sha256')
  }

  const keyFields = (): Record<string, unknown> => source === 'own'
    ? { key, keyEncoding }
    : { keyName, ...(keyVersion ? { keyVersion: Number(keyVersion) } : {}) }

  const run = async (what: 'compute' | 'check') => {
    setState({ ...IDLE, busy: true })
    setResult(null)
    setChecked(null)
    try {
      if (what === 'compute') {
        const format = source === 'server' && tagged ? { format: 'tagged' } : {}
        setResult(await api<HmacAnswer>('/api/hmac', { message, ...keyFields(), algorithm, encoding, inputEncoding: messageEncoding, ...format }))
      } else {
        setChecked(await api<CheckAnswer>('/api/hmac/verify', { message, hmac: toCheck.trim(), ...keyFields(), algorithm, inputEncoding: messageEncoding }))
      }
      setState(IDLE)
    } catch (error) {
      const failed = failure(error, FIELDS)
      // The API names the message's encoding inputEncoding; show it by the field it concerns.
      if (failed.fields.inputEncoding) failed.fields.messageEncoding = failed.fields.inputEncoding
      setState(failed)
    }
  }

  const submit = (event: Event) => {
    event.preventDefault()
    void run('compute')
  }

  const sources = serverKeys.length > 0 ? [['own', 'Your own key'], ['server', 'A key this server holds']] as const : [['own', 'Your own key']] as const
  const versions: Array<readonly [string, string]> = chosen
    ? [['', `current (v${chosen.currentVersion})`], ...chosen.versions.filter((each) => each.verifies && each.version !== chosen.currentVersion)
      .map((each) => [String(each.version), `v${each.version} (${each.state})`] as const)]
    : [['', 'current']]

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">HMAC</h2>
      <div class="row">
        <TextArea id="hmac-message" label="Message" value={message} onInput={setMessage} error={state.fields.message} rows={3} />
        <Select id="hmac-message-encoding" label="Message encoding" value={messageEncoding} options={INPUT_ENCODINGS} onChange={setMessageEncoding} error={state.fields.messageEncoding} />
      </div>
      {serverKeys.length > 0 && (
        <div class="row">
          <Select id="hmac-source" label="Key source" value={source} options={sources} onChange={(value) => setSource(value as 'own' | 'server')} />
        </div>
      )}
      {source === 'own'
        ? (
          <div class="row">
            <TextArea id="hmac-key" label="Key" value={key} onInput={setKey} error={state.fields.key} rows={1} mono />
            <Select id="hmac-key-encoding" label="Key encoding" value={keyEncoding} options={INPUT_ENCODINGS} onChange={setKeyEncoding} error={state.fields.keyEncoding} />
          </div>
          )
        : (
          <div class="row">
            <Select id="hmac-key-name" label="Key name" value={keyName} options={serverKeys.map((each) => [each.name, each.name] as const)} onChange={chooseKey} error={state.fields.keyName} />
            <Select id="hmac-key-version" label="Key version" value={keyVersion} options={versions} onChange={setKeyVersion} error={state.fields.keyVersion} />
          </div>
          )}
      <div class="row">
        <AlgorithmPicker id="hmac-algorithm" algorithms={props.algorithms} operation="hmac" value={algorithm} onChange={setAlgorithm} error={state.fields.algorithm} />
        <Select id="hmac-encoding" label="Encoding" value={encoding} options={OUTPUT_ENCODINGS} onChange={setEncoding} error={state.fields.encoding} />
      </div>
      {source === 'server' && (
        <p class="check">
          <label>
            <input id="hmac-tagged" type="checkbox" checked={tagged} onChange={(event) => setTagged(event.currentTarget.checked)} />
            {' '}Tagged: write it as hashd:v&lt;version&gt;:&lt;base64&gt;, so that checking it needs no version
          </label>
        </p>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy || props.algorithms === null}>Compute HMAC</button>
        {state.busy && <span class="busy" aria-live="polite">Working…</span>}
      </div>
      <TextArea id="hmac-check" label="HMAC to check" value={toCheck} onInput={setToCheck} error={state.fields.hmac} rows={1} mono
        hint="hex, base64 or a hashd:v<version>: tag; checked against the message and key above" />
      <div class="actions">
        <button type="button" disabled={state.busy || toCheck.trim() === ''} onClick={() => void run('check')}>Check HMAC</button>
      </div>
      <FormStatus state={state} />
      {result && (
        <div class="result" aria-live="polite">
          <Output id="hmac-result" label={`HMAC-${result.algorithm} (${result.format === 'tagged' ? 'tagged' : result.encoding})${result.keyName ? `, key ${result.keyName} v${result.keyVersion}` : ''}`} value={result.hmac} />
        </div>
      )}
      {checked && (
        <div class={`result verdict ${checked.valid ? 'match' : 'no-match'}`} role="status" id="hmac-verdict">
          <p class="verdict-text"><span aria-hidden="true">{checked.valid ? '✓' : '✗'}</span> {checked.valid ? 'Valid' : 'Not valid'}</p>
          <dl class="facts">
            {checked.keyName !== undefined && (<><dt>Key</dt><dd class="mono">{checked.keyName}{checked.keyVersion ? ` v${checked.keyVersion}` : ''}</dd></>)}
            <dt>Algorithm</dt><dd>{checked.algorithm}</dd>
          </dl>
          {checked.rotateRecommended && <p class="advice"><strong>Make it again:</strong> {checked.reason ?? 'it is under an older key version'}.</p>}
          {!checked.valid && checked.reason && <p class="meta">{checked.reason}</p>}
        </div>
      )}
    </form>
  )
}

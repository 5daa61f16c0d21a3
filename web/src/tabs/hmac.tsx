/** HMAC: POST /api/hmac with the message, the key and their encodings (RFC 2104). */
import { useState } from 'preact/hooks'
import type { AlgorithmInfo } from '../algorithms'
import { api } from '../api'
import { AlgorithmPicker, FormStatus, IDLE, INPUT_ENCODINGS, OUTPUT_ENCODINGS, Output, Select, TextArea, failure, type RequestState } from '../components'

interface HmacAnswer { hmac: string, algorithm: string, encoding: string, processingTimeMs: number }

export function HmacTab(props: { algorithms: AlgorithmInfo[] | null }) {
  const [message, setMessage] = useState('')
  const [messageEncoding, setMessageEncoding] = useState('utf8')
  const [key, setKey] = useState('')
  const [keyEncoding, setKeyEncoding] = useState('utf8')
  const [algorithm, setAlgorithm] = useState('sha256')
  const [encoding, setEncoding] = useState('hex')
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<HmacAnswer | null>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    setState({ ...IDLE, busy: true })
    setResult(null)
    try {
      setResult(await api<HmacAnswer>('/api/hmac', { message, key, algorithm, encoding, keyEncoding, inputEncoding: messageEncoding }))
      setState(IDLE)
    } catch (error) {
      const state = failure(error, ['message', 'key', 'algorithm', 'encoding', 'keyEncoding', 'inputEncoding'])
      // The API names the message's encoding inputEncoding; show it by the field it concerns.
      if (state.fields.inputEncoding) state.fields.messageEncoding = state.fields.inputEncoding
      setState(state)
    }
  }

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">HMAC</h2>
      <div class="row">
        <TextArea id="hmac-message" label="Message" value={message} onInput={setMessage} error={state.fields.message} rows={3} />
        <Select id="hmac-message-encoding" label="Message encoding" value={messageEncoding} options={INPUT_ENCODINGS} onChange={setMessageEncoding} error={state.fields.messageEncoding} />
      </div>
      <div class="row">
        <TextArea id="hmac-key" label="Key" value={key} onInput={setKey} error={state.fields.key} rows={1} mono />
        <Select id="hmac-key-encoding" label="Key encoding" value={keyEncoding} options={INPUT_ENCODINGS} onChange={setKeyEncoding} error={state.fields.keyEncoding} />
      </div>
      <div class="row">
        <AlgorithmPicker id="hmac-algorithm" algorithms={props.algorithms} operation="hmac" value={algorithm} onChange={setAlgorithm} error={state.fields.algorithm} />
        <Select id="hmac-encoding" label="Encoding" value={encoding} options={OUTPUT_ENCODINGS} onChange={setEncoding} error={state.fields.encoding} />
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy || props.algorithms === null}>Compute HMAC</button>
        {state.busy && <span class="busy" aria-live="polite">Working…</span>}
      </div>
      <FormStatus state={state} />
      {result && (
        <div class="result" aria-live="polite">
          <Output id="hmac-result" label={`HMAC-${result.algorithm} (${result.encoding})`} value={result.hmac} />
        </div>
      )}
    </form>
  )
}

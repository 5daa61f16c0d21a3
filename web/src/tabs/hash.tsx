/**
 * Hash: POST /api/hash with the picked algorithm and its options (defaults and bounds from
 * /api/algorithms), and "All digests": the input under every file-hashing algorithm at once, sent
 * as one upload per 16 algorithms to /api/filehash (`curl -F file=@- -F algorithms=…`), so a
 * hundred digests cost a few requests rather than a hundred.
 *
 * Password hashes are peppered by the server when it has pepper keys; the answer's `pepperKey` is
 * shown, and unticking "Pepper" sends `"pepper": false`.
 */
import { useState } from 'preact/hooks'
import type { AlgorithmInfo } from '../algorithms'
import { api, upload } from '../api'
import { AlgorithmPicker, CopyButton, Field, FormStatus, IDLE, INPUT_ENCODINGS, OUTPUT_ENCODINGS, Output, Select, TextArea, describedBy, failure, type RequestState } from '../components'

/** /api/filehash takes at most this many algorithms per request (MAX_FILE_ALGORITHMS). */
const FILE_ALGORITHMS_PER_REQUEST = 16

interface HashAnswer { hash: string, algorithm: string, encoding: string, length: number, processingTimeMs: number, pepperKey?: string }

function toBytes(input: string, encoding: string): Blob {
  if (encoding === 'hex') {
    const clean = input.replace(/\s+/g, '')
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(clean)) throw new Error('The input is not valid hex.')
    return new Blob([new Uint8Array(clean.match(/../g)?.map((pair) => parseInt(pair, 16)) ?? [])])
  }
  if (encoding === 'base64') {
    try {
      const binary = atob(input.replace(/\s+/g, '').replaceAll('-', '+').replaceAll('_', '/'))
      return new Blob([Uint8Array.from(binary, (char) => char.charCodeAt(0))])
    } catch {
      throw new Error('The input is not valid base64.')
    }
  }
  return new Blob([input])
}

export function HashTab(props: { algorithms: AlgorithmInfo[] | null }) {
  const [input, setInput] = useState('')
  const [inputEncoding, setInputEncoding] = useState('utf8')
  const [algorithm, setAlgorithm] = useState('sha256')
  const [encoding, setEncoding] = useState('hex')
  const [options, setOptions] = useState<Record<string, Record<string, string>>>({})
  const [pepper, setPepper] = useState(true)
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<HashAnswer | null>(null)
  const [all, setAll] = useState<Array<[string, string]> | null>(null)
  const [allState, setAllState] = useState<RequestState>(IDLE)

  const info = props.algorithms?.find((candidate) => candidate.name === algorithm)
  const optionSpecs = Object.entries(info?.options ?? {})
  const optionValues = options[algorithm] ?? {}
  const isPassword = info?.kind === 'password'

  const submit = async (event: Event) => {
    event.preventDefault()
    setState({ ...IDLE, busy: true })
    setResult(null)
    const chosen: Record<string, number> = {}
    for (const [name, spec] of optionSpecs) {
      const text = optionValues[name]
      if (text !== undefined && text !== '' && Number(text) !== spec.default) chosen[name] = Number(text)
    }
    const body: Record<string, unknown> = { input, algorithm, inputEncoding }
    if (!isPassword) body.encoding = encoding
    if (Object.keys(chosen).length > 0) body.options = chosen
    // Left out when ticked: the server peppers by default when it has keys, and has nothing to do otherwise.
    if (isPassword && !pepper) body.pepper = false
    try {
      setResult(await api<HashAnswer>('/api/hash', body))
      setState(IDLE)
    } catch (error) {
      setState(failure(error, ['input', 'algorithm', 'encoding', 'inputEncoding', ...optionSpecs.map(([name]) => name)]))
    }
  }

  const hashAll = async () => {
    // Digests, XOFs and checksums: a similarity hash is no digest, and TLSH has none of a short input.
    const names = (props.algorithms ?? []).filter((candidate) => candidate.operations.includes('filehash') && candidate.kind !== 'similarity').map((candidate) => candidate.name)
    setAllState({ ...IDLE, busy: true })
    setAll(null)
    try {
      const bytes = toBytes(input, inputEncoding)
      const file = new File([bytes], 'input')
      const rows: Array<[string, string]> = []
      for (let start = 0; start < names.length; start += FILE_ALGORITHMS_PER_REQUEST) {
        const batch = names.slice(start, start + FILE_ALGORITHMS_PER_REQUEST)
        const answer = await upload<{ hashes: Record<string, string> }>('/api/filehash',
          [['algorithms', batch.join(',')], ['encoding', encoding]], file, () => undefined, new AbortController().signal)
        rows.push(...Object.entries(answer.hashes))
      }
      setAll(rows)
      setAllState(IDLE)
    } catch (error) {
      setAllState(failure(error, []))
    }
  }

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">Hash</h2>
      <TextArea id="hash-input" label="Input" value={input} onInput={setInput} error={state.fields.input} rows={4} />
      <div class="row">
        <Select id="hash-input-encoding" label="Input encoding" value={inputEncoding} options={INPUT_ENCODINGS} onChange={setInputEncoding} error={state.fields.inputEncoding} />
        <AlgorithmPicker id="hash-algorithm" algorithms={props.algorithms} operation="hash" value={algorithm} onChange={setAlgorithm} error={state.fields.algorithm} />
        {!isPassword && <Select id="hash-encoding" label="Encoding" value={encoding} options={OUTPUT_ENCODINGS} onChange={setEncoding} error={state.fields.encoding} />}
      </div>
      {optionSpecs.length > 0 && (
        <fieldset class="options">
          <legend>{info?.displayName} options</legend>
          <div class="row">
            {optionSpecs.map(([name, spec]) => {
              const id = `hash-option-${name}`
              const error = state.fields[name]
              return (
                <Field key={name} id={id} label={name} error={error} hint={`${spec.description} (${spec.min}–${spec.max}, default ${spec.default})`}>
                  <input type="number" inputMode="numeric" {...describedBy(id, error, true)} min={spec.min} max={spec.max}
                    value={optionValues[name] ?? String(spec.default)}
                    onInput={(event) => setOptions({ ...options, [algorithm]: { ...optionValues, [name]: event.currentTarget.value } })} />
                </Field>
              )
            })}
          </div>
        </fieldset>
      )}
      {isPassword && (
        <p class="check">
          <label>
            <input id="hash-pepper" type="checkbox" checked={pepper} onChange={(event) => setPepper(event.currentTarget.checked)} />
            {' '}Pepper with the server's current key (when it has pepper keys)
          </label>
        </p>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy || props.algorithms === null}>Hash</button>
        <button type="button" onClick={hashAll} disabled={allState.busy || props.algorithms === null}>All digests</button>
        {(state.busy || allState.busy) && <span class="busy" aria-live="polite">Working…</span>}
      </div>
      <FormStatus state={state} />
      {result && (
        <div class="result" aria-live="polite">
          <Output id="hash-result" label={`${result.algorithm} (${result.encoding})`} value={result.hash} />
          <p class="meta">
            {result.length} characters · {result.processingTimeMs.toFixed(1)} ms on the server
            {result.pepperKey !== undefined && <> · peppered with key <strong class="mono">{result.pepperKey}</strong></>}
          </p>
        </div>
      )}
      <FormStatus state={allState} />
      {all && (
        <div class="result all">
          <h3>All digests ({encoding})</h3>
          <table class="digests">
            <caption class="visually-hidden">The input under every digest and checksum</caption>
            <thead><tr><th scope="col">Algorithm</th><th scope="col">Digest</th><th scope="col"><span class="visually-hidden">Copy</span></th></tr></thead>
            <tbody>
              {all.map(([name, digest]) => (
                <tr key={name}><th scope="row">{name}</th><td class="mono">{digest}</td><td><CopyButton text={digest} what={name} /></td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </form>
  )
}

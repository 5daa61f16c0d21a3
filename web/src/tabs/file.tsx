/**
 * File: POST /api/filehash as multipart, the File object itself in the FormData, so the browser
 * streams it from disk (the page never reads it). Upload progress, throughput and Cancel come
 * from XMLHttpRequest; the optional Expected checksum is compared by the server (`matches`).
 */
import { useRef, useState } from 'preact/hooks'
import { KIND_LABELS, type AlgorithmInfo } from '../algorithms'
import { upload, type UploadProgress } from '../api'
import { CopyButton, Field, FormStatus, IDLE, OUTPUT_ENCODINGS, Select, describedBy, failure, type RequestState } from '../components'

const MAX_ALGORITHMS = 16

interface FileAnswer { name: string, size: number, hashes: Record<string, string>, matches?: Record<string, boolean> }

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`
}

export function FileTab(props: { algorithms: AlgorithmInfo[] | null }) {
  const [file, setFile] = useState<File | null>(null)
  const [chosen, setChosen] = useState<string[]>(['sha256'])
  const [encoding, setEncoding] = useState('hex')
  const [expected, setExpected] = useState('')
  const [dragging, setDragging] = useState(false)
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<FileAnswer | null>(null)
  const controller = useRef<AbortController | null>(null)

  const available = (props.algorithms ?? []).filter((algorithm) => algorithm.operations.includes('filehash'))
  const kinds = (Object.keys(KIND_LABELS) as Array<AlgorithmInfo['kind']>).filter((kind) => available.some((algorithm) => algorithm.kind === kind))

  const toggle = (name: string, on: boolean) => setChosen(on ? [...chosen, name] : chosen.filter((other) => other !== name))

  const submit = async (event: Event) => {
    event.preventDefault()
    if (!file) { setState({ ...IDLE, fields: { file: 'Choose a file first.' } }); return }
    if (chosen.length === 0) { setState({ ...IDLE, fields: { algorithms: 'Tick at least one algorithm.' } }); return }
    controller.current = new AbortController()
    setState({ ...IDLE, busy: true })
    setResult(null)
    setProgress({ loaded: 0, total: file.size, startedAt: performance.now() })
    const fields: Array<[string, string]> = [['algorithms', chosen.join(',')], ['encoding', encoding]]
    if (expected.trim() !== '') fields.push(['expected', expected.trim()])
    try {
      setResult(await upload<FileAnswer>('/api/filehash', fields, file, setProgress, controller.current.signal))
      setState(IDLE)
    } catch (error) {
      if ((error as Error).name === 'AbortError') setState({ ...IDLE, message: 'Upload cancelled.' })
      else setState(failure(error, ['file', 'algorithms', 'encoding', 'expected']))
      setProgress(null)
    }
  }

  const elapsed = progress ? (performance.now() - progress.startedAt) / 1000 : 0
  const rate = progress && elapsed > 0 ? progress.loaded / elapsed : 0
  // The browser counts the whole multipart body; show the file's share of it, in the file's bytes.
  const fileSize = file?.size ?? 0
  const fileLoaded = progress && progress.total > 0 ? Math.min(fileSize, Math.round(progress.loaded / progress.total * fileSize)) : 0
  const matched = result?.matches ? Object.entries(result.matches).filter(([, match]) => match).map(([name]) => name) : []

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">File</h2>
      <div class={`drop ${dragging ? 'dragging' : ''}`}
        onDragOver={(event) => { event.preventDefault(); setDragging(true) }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault()
          setDragging(false)
          const dropped = event.dataTransfer?.files[0]
          if (dropped) { setFile(dropped); setResult(null) }
        }}>
        <Field id="file-file" label="File" error={state.fields.file} hint="Drop a file here, or choose one. It is streamed to the server, never read whole into this page.">
          <input type="file" {...describedBy('file-file', state.fields.file, true)}
            onChange={(event) => { setFile(event.currentTarget.files?.[0] ?? null); setResult(null) }} />
        </Field>
        {file && <p class="meta" aria-live="polite">Selected: <strong>{file.name}</strong>, {formatBytes(file.size)}</p>}
      </div>
      <fieldset class="checkboxes" aria-describedby={state.fields.algorithms ? 'file-algorithms-error' : 'file-algorithms-hint'}>
        <legend>Algorithms</legend>
        <p class="hint" id="file-algorithms-hint">Up to {MAX_ALGORITHMS}, computed in one pass. {chosen.length} chosen.</p>
        {props.algorithms === null && <p>Loading…</p>}
        {kinds.map((kind) => (
          <div key={kind} class="group">
            <h3>{KIND_LABELS[kind]}</h3>
            <ul>
              {available.filter((algorithm) => algorithm.kind === kind).map((algorithm) => (
                <li key={algorithm.name}>
                  <label>
                    <input type="checkbox" value={algorithm.name} checked={chosen.includes(algorithm.name)}
                      disabled={!chosen.includes(algorithm.name) && chosen.length >= MAX_ALGORITHMS}
                      onChange={(event) => toggle(algorithm.name, event.currentTarget.checked)} />
                    {' '}{algorithm.name}
                  </label>
                </li>
              ))}
            </ul>
          </div>
        ))}
        {state.fields.algorithms && <p class="field-error" id="file-algorithms-error">{state.fields.algorithms}</p>}
      </fieldset>
      <div class="row">
        <Select id="file-encoding" label="Encoding" value={encoding} options={OUTPUT_ENCODINGS} onChange={setEncoding} error={state.fields.encoding} />
        <Field id="file-expected" label="Expected" error={state.fields.expected} class="grow"
          hint="Optional: a published checksum, in hex (any case) or base64, or a line of a SHA256SUMS file">
          <input type="text" class="mono" {...describedBy('file-expected', state.fields.expected, true)} value={expected}
            autocomplete="off" spellcheck={false} onInput={(event) => setExpected(event.currentTarget.value)} />
        </Field>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy || props.algorithms === null}>Hash file</button>
        {state.busy && <button type="button" onClick={() => controller.current?.abort()}>Cancel</button>}
      </div>
      {progress && (state.busy || result) && (
        <div class="progress">
          <progress id="file-progress" aria-label="Upload progress" max={fileSize || 1} value={fileSize ? fileLoaded : progress.loaded ? 1 : 0} />
          <p class="meta" aria-live="off">{formatBytes(fileLoaded)} of {formatBytes(fileSize)} · {formatBytes(Math.round(rate))}/s</p>
        </div>
      )}
      <FormStatus state={state} />
      {result && (
        <div class="result" aria-live="polite">
          <p class="meta"><strong>{result.name}</strong>, {formatBytes(result.size)}</p>
          {result.matches && (
            <p class={`verdict-text ${matched.length > 0 ? 'match' : 'no-match'}`} role="status">
              {matched.length > 0 ? `Expected checksum matches ${matched.join(', ')}` : 'Expected checksum matches none of the digests'}
            </p>
          )}
          <table class="digests">
            <caption class="visually-hidden">Digests of {result.name}</caption>
            <thead><tr><th scope="col">Algorithm</th><th scope="col">Digest</th>{result.matches && <th scope="col">Expected</th>}<th scope="col"><span class="visually-hidden">Copy</span></th></tr></thead>
            <tbody>
              {Object.entries(result.hashes).map(([name, digest]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td class="mono">{digest}</td>
                  {result.matches && <td class={result.matches[name] ? 'match' : 'no-match'}>{result.matches[name] ? 'Match' : 'No match'}</td>}
                  <td><CopyButton text={digest} what={name} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </form>
  )
}

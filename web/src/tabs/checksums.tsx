/**
 * Checksums: POST /api/checksums. A published list (pasted, chosen or dropped), optionally its
 * signature and the signer's public key, and the downloaded files; the server checks the
 * signature first, then each file against its lines. Files go into the FormData as File objects,
 * so the browser streams them from disk; the page never reads them.
 */
import { useRef, useState } from 'preact/hooks'
import type { AlgorithmInfo } from '../algorithms'
import { ApiError, uploadForm, type FormPart, type UploadProgress } from '../api'
import { AlgorithmPicker, Field, FormStatus, IDLE, describedBy, failure, type RequestState } from '../components'
import { formatBytes } from './file'

type Status = 'ok' | 'failed' | 'missing' | 'unlisted'

interface CheckedFile {
  name: string
  status: Status
  algorithm?: string
  algorithmGuessed?: boolean
  line?: number
  expected?: string
  actual?: string
  file?: string
}

interface SignatureInfo { verified: true, scheme: string, keyId: string, trustedComment?: string, fingerprint?: string, userId?: string }

interface CheckAnswer {
  ok: boolean
  strict: boolean
  files: CheckedFile[]
  counts: Record<Status, number>
  skipped: Array<{ line: number, reason: string, tag?: string }>
  skippedLines: number
  signature?: SignatureInfo
}

/** What `sha256sum -c` would print for each status, the words the result table shows too. */
const STATUS_TEXT: Record<Status, string> = { ok: 'OK', failed: 'FAILED', missing: 'Not sent', unlisted: 'Not in the list' }

const SCHEME_NAMES: Record<string, string> = { minisign: 'minisign', signify: 'signify', openpgp: 'OpenPGP' }

/** The fields a 4xx about the signature points at (errors[].pointer), where the page shows it. */
const SIGNATURE_FIELDS = ['signature', 'publicKey']

function summary(answer: CheckAnswer): string {
  const { ok, failed, missing, unlisted } = answer.counts
  const parts = [`${ok} OK`, `${failed} failed`]
  if (missing > 0) parts.push(`${missing} not sent`)
  if (unlisted > 0) parts.push(`${unlisted} not in the list`)
  if (ok + failed === 0) return `No file was checked: ${parts.join(', ')}`
  return `${answer.ok ? 'Check passed' : 'Check failed'}: ${parts.join(', ')}`
}

export function ChecksumsTab(props: { algorithms: AlgorithmInfo[] | null }) {
  const [listText, setListText] = useState('')
  const [listFile, setListFile] = useState<File | null>(null)
  const [algorithm, setAlgorithm] = useState('')
  const [strict, setStrict] = useState(false)
  const [signature, setSignature] = useState<File | null>(null)
  const [keyText, setKeyText] = useState('')
  const [keyFile, setKeyFile] = useState<File | null>(null)
  const [files, setFiles] = useState<File[]>([])
  const [dragging, setDragging] = useState<'list' | 'files' | null>(null)
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const [state, setState] = useState<RequestState>(IDLE)
  const [signatureError, setSignatureError] = useState<string | null>(null)
  const [result, setResult] = useState<CheckAnswer | null>(null)
  const controller = useRef<AbortController | null>(null)

  const clearResult = () => { setResult(null); setSignatureError(null) }
  const addFiles = (list: FileList | null | undefined) => {
    if (!list || list.length === 0) return
    const added = [...list]
    setFiles((current) => [...current.filter((file) => !added.some((other) => other.name === file.name)), ...added])
    clearResult()
  }

  const submit = async (event: Event) => {
    event.preventDefault()
    const fields: RequestState['fields'] = {}
    if (!listFile && listText.trim() === '') fields.checksums = 'Paste the checksum list, or choose or drop its file.'
    if (files.length === 0) fields.file = 'Choose the files to check.'
    const hasKey = keyFile !== null || keyText.trim() !== ''
    if (signature && !hasKey) fields.publicKey = 'A signature is checked with the signer\'s public key: paste it or choose its file.'
    if (Object.keys(fields).length > 0) { setState({ ...IDLE, fields }); return }
    const parts: FormPart[] = []
    // Pasted text goes as a file part: a text field's line ends become CRLF in a multipart body
    // (HTML's form encoding), and a signature covers the list's exact bytes.
    parts.push(listFile ? ['checksums', listFile, listFile.name] : ['checksums', new Blob([listText], { type: 'text/plain' }), 'pasted-list'])
    if (algorithm !== '') parts.push(['algorithm', algorithm])
    parts.push(['strict', String(strict)])
    // A key without a signature file is for a clearsigned list; the server says so if it is not one.
    if (signature) parts.push(['signature', signature, signature.name])
    if (hasKey) parts.push(keyFile ? ['publicKey', keyFile, keyFile.name] : ['publicKey', keyText.trim()])
    for (const file of files) parts.push(['file', file, file.name])
    const total = files.reduce((sum, file) => sum + file.size, 0)
    controller.current = new AbortController()
    setState({ ...IDLE, busy: true })
    clearResult()
    setProgress({ loaded: 0, total, startedAt: performance.now() })
    try {
      setResult(await uploadForm<CheckAnswer>('/api/checksums', parts, total, setProgress, controller.current.signal))
      setState(IDLE)
    } catch (error) {
      setProgress(null)
      if ((error as Error).name === 'AbortError') { setState({ ...IDLE, message: 'Check cancelled.' }); return }
      const failed = failure(error, ['checksums', 'algorithm', 'file', ...SIGNATURE_FIELDS])
      // A signature refusal (422: bad, by another key, malformed, unsupported) is the signature's
      // state, shown in its own box; a form mistake (400) stays beside its field.
      const about = SIGNATURE_FIELDS.find((field) => failed.fields[field])
      if (about && error instanceof ApiError && error.status === 422) {
        setSignatureError(failed.fields[about] ?? null)
        setState({ ...failed, fields: {} })
      } else {
        setState(failed)
      }
    }
  }

  const elapsed = progress ? (performance.now() - progress.startedAt) / 1000 : 0
  const rate = progress && elapsed > 0 ? progress.loaded / elapsed : 0
  const totalSize = files.reduce((sum, file) => sum + file.size, 0)

  const dropProps = (target: 'list' | 'files') => ({
    onDragOver: (event: DragEvent) => { event.preventDefault(); setDragging(target) },
    onDragLeave: () => setDragging(null),
    onDrop: (event: DragEvent) => {
      event.preventDefault()
      setDragging(null)
      const dropped = event.dataTransfer?.files
      if (target === 'files') addFiles(dropped)
      else if (dropped?.[0]) { setListFile(dropped[0]); clearResult() }
    },
  })

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">Checksums</h2>
      <p class="meta">Check downloads against the checksum list their project publishes (SHA256SUMS, B3SUMS, <code>*.sha256</code>), and the list against its signature.</p>
      <div class={`drop ${dragging === 'list' ? 'dragging' : ''}`} {...dropProps('list')}>
        <Field id="checksums-list" label="Checksum list" error={state.fields.checksums}
          hint="Paste it, or drop or choose its file below. sha256sum, sha512sum --tag, b2sum, b3sum, xxhsum and rhash lists; several algorithms may be mixed.">
          <textarea {...describedBy('checksums-list', state.fields.checksums, true)} rows={5} class="mono" spellcheck={false} autocomplete="off"
            autocapitalize="off" value={listText} disabled={listFile !== null}
            onInput={(event) => { setListText(event.currentTarget.value); clearResult() }} />
        </Field>
        <Field id="checksums-list-file" label="List file" hint="Optional: used instead of the pasted text; its name (SHA512SUMS, B3SUMS) also tells the algorithm of untagged lines. For a signed list made on Windows (CRLF), choose the file: pasting changes its line ends.">
          <input type="file" {...describedBy('checksums-list-file', undefined, true)}
            onChange={(event) => { setListFile(event.currentTarget.files?.[0] ?? null); clearResult() }} />
        </Field>
        {listFile && <p class="meta">List: <strong>{listFile.name}</strong>, {formatBytes(listFile.size)} <button type="button" onClick={() => { setListFile(null); clearResult() }}>Use the pasted text</button></p>}
      </div>
      <div class="row">
        <AlgorithmPicker id="checksums-algorithm" label="Algorithm of untagged lines" algorithms={props.algorithms} operation="filehash"
          value={algorithm} onChange={setAlgorithm} auto="Guess (from the list's name or the digest's length)" error={state.fields.algorithm} />
      </div>
      <p class="check">
        <label><input type="checkbox" id="checksums-strict" checked={strict} onChange={(event) => setStrict(event.currentTarget.checked)} /> Strict: a listed file that is not sent fails the check</label>
      </p>
      <fieldset class="signature-inputs">
        <legend>Signature (optional)</legend>
        <Field id="checksums-signature" label="Signature file" error={state.fields.signature}
          hint="minisign .minisig, signify .sig, or OpenPGP .asc/.sig/.gpg. It is checked before any line of the list is used. A clearsigned list (gpg --clearsign) needs only the key.">
          <input type="file" {...describedBy('checksums-signature', state.fields.signature, true)}
            onChange={(event) => { setSignature(event.currentTarget.files?.[0] ?? null); clearResult() }} />
        </Field>
        <Field id="checksums-key" label="Public key" error={state.fields.publicKey}
          hint="minisign's RW… key or key file, signify's .pub, or an armored OpenPGP key.">
          <textarea {...describedBy('checksums-key', state.fields.publicKey, true)} rows={2} class="mono" spellcheck={false} autocomplete="off"
            autocapitalize="off" value={keyText} disabled={keyFile !== null} onInput={(event) => { setKeyText(event.currentTarget.value); clearResult() }} />
        </Field>
        <Field id="checksums-key-file" label="Public key file" hint="Optional: used instead of the pasted key.">
          <input type="file" {...describedBy('checksums-key-file', undefined, true)}
            onChange={(event) => { setKeyFile(event.currentTarget.files?.[0] ?? null); clearResult() }} />
        </Field>
      </fieldset>
      <div class={`drop ${dragging === 'files' ? 'dragging' : ''}`} {...dropProps('files')}>
        <Field id="checksums-files" label="Files to check" error={state.fields.file}
          hint="Drop the downloaded files here, or choose them. Each is matched to the list by its name and streamed to the server once.">
          <input type="file" multiple {...describedBy('checksums-files', state.fields.file, true)}
            onChange={(event) => addFiles(event.currentTarget.files)} />
        </Field>
        {files.length > 0 && (
          <p class="meta" aria-live="polite">{files.length} {files.length === 1 ? 'file' : 'files'}, {formatBytes(totalSize)}: {files.map((file) => file.name).join(', ')}
            {' '}<button type="button" onClick={() => { setFiles([]); clearResult() }}>Clear files</button></p>
        )}
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy || props.algorithms === null}>Check files</button>
        {state.busy && <button type="button" onClick={() => controller.current?.abort()}>Cancel</button>}
      </div>
      {progress && state.busy && (
        <div class="progress">
          <progress aria-label="Upload progress" max={progress.total || 1} value={Math.min(progress.loaded, progress.total || 1)} />
          <p class="meta" aria-live="off">{formatBytes(Math.min(progress.loaded, totalSize))} of {formatBytes(totalSize)} · {formatBytes(Math.round(rate))}/s</p>
        </div>
      )}
      <FormStatus state={state} />
      {signatureError && (
        <div class="verdict no-match signature-state" role="status">
          <p class="verdict-text">Signature not verified</p>
          <p class="advice">{signatureError}</p>
        </div>
      )}
      {result && (
        <div class="result" aria-live="polite">
          {result.signature && (
            <div class="verdict match signature-state" role="status">
              <p class="verdict-text">Signature verified</p>
              <dl class="facts">
                <dt>Scheme</dt><dd>{SCHEME_NAMES[result.signature.scheme] ?? result.signature.scheme}</dd>
                <dt>Key</dt><dd class="mono">{result.signature.keyId}</dd>
                {result.signature.userId && <><dt>User</dt><dd>{result.signature.userId}</dd></>}
                {result.signature.fingerprint && <><dt>Fingerprint</dt><dd class="mono">{result.signature.fingerprint}</dd></>}
                {result.signature.trustedComment !== undefined && <><dt>Trusted comment</dt><dd>{result.signature.trustedComment}</dd></>}
              </dl>
            </div>
          )}
          <p class={`verdict-text ${result.ok ? 'match' : 'no-match'}`} role="status">{summary(result)}</p>
          <table class="digests checks">
            <caption class="visually-hidden">Each file's result</caption>
            <thead><tr><th scope="col">File</th><th scope="col">Algorithm</th><th scope="col">Result</th><th scope="col">Digests</th></tr></thead>
            <tbody>
              {result.files.map((file, index) => (
                <tr key={`${index}-${file.name}`} class={`status-${file.status}`}>
                  <th scope="row">{file.name}{file.file && <span class="meta"> (sent as {file.file})</span>}</th>
                  <td>{file.algorithm ?? '—'}{file.algorithmGuessed && <span class="meta"> (guessed)</span>}</td>
                  <td class={`status ${file.status === 'ok' ? 'match' : file.status === 'failed' ? 'no-match' : 'other'}`}>{STATUS_TEXT[file.status]}</td>
                  <td class="mono">
                    {file.expected && <div>expected {file.expected}</div>}
                    {file.actual && file.actual !== file.expected && <div>actual {file.actual}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {result.skippedLines > 0 && (
            <details>
              <summary>{result.skippedLines} {result.skippedLines === 1 ? 'line was' : 'lines were'} not used</summary>
              <ul class="variants">{result.skipped.map((skip) => <li key={skip.line}>Line {skip.line}: {skip.reason}{skip.tag ? ` ${skip.tag}` : ''}</li>)}</ul>
            </details>
          )}
        </div>
      )}
    </form>
  )
}

/**
 * Compare with a store: POST /api/filehash/verify. What a store says about an object (S3, Cloud
 * Storage, Azure, Dropbox or OneDrive JSON, a magnet link, git ls-tree lines: pasted; a .torrent:
 * chosen), then the file, which the server hashes with every hash the metadata names and checks
 * field by field. The metadata goes first in the form, as the route requires; the file goes in as
 * a File object, so the browser streams it from disk and the page never reads it.
 */
import { useRef, useState } from 'preact/hooks'
import { uploadForm, type FormPart, type UploadProgress } from '../api'
import { Field, FormStatus, IDLE, describedBy, failure, type RequestState } from '../components'
import { formatBytes } from './file'

type Verdict = 'match' | 'mismatch' | 'cannot-check'

interface FieldVerdict {
  field: string
  verdict: Verdict
  expected: string
  actual?: string
  reason?: string
  partSize?: number
  algorithm: string
}

interface CompareAnswer { verdict: Verdict, shape: string, size: number, fields: FieldVerdict[] }

const VERDICT_TEXT: Record<Verdict, string> = { match: 'Match', mismatch: 'Mismatch', 'cannot-check': 'Cannot check' }
const VERDICT_CLASS: Record<Verdict, string> = { match: 'match', mismatch: 'no-match', 'cannot-check': 'other' }

/** The store each metadata shape comes from, in the words of the verdict line. */
const SHAPE_NAMES: Record<string, string> = {
  s3: 'Amazon S3', gcs: 'Google Cloud Storage', azure: 'Azure Blob Storage', dropbox: 'Dropbox', onedrive: 'OneDrive',
  torrent: 'the .torrent', magnet: 'the magnet link', 'git-ls-tree': 'git ls-tree',
}

function summary(answer: CompareAnswer): string {
  const source = SHAPE_NAMES[answer.shape] ?? answer.shape
  const counts = (verdict: Verdict) => answer.fields.filter((field) => field.verdict === verdict).length
  const checked = `${counts('match')} matched, ${counts('mismatch')} mismatched, ${counts('cannot-check')} could not be checked`
  if (answer.verdict === 'match') return `Match: the file is what ${source} describes (${checked})`
  if (answer.verdict === 'mismatch') return `Mismatch: the file is not what ${source} describes (${checked})`
  return `Cannot check: no field of ${source}'s metadata could be checked (${checked})`
}

export function CompareTab() {
  const [metadataText, setMetadataText] = useState('')
  const [metadataFile, setMetadataFile] = useState<File | null>(null)
  const [file, setFile] = useState<File | null>(null)
  const [dragging, setDragging] = useState<'metadata' | 'file' | null>(null)
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<CompareAnswer | null>(null)
  const controller = useRef<AbortController | null>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    const fields: RequestState['fields'] = {}
    if (!metadataFile && metadataText.trim() === '') fields.metadata = 'Paste what the store reports about the object, or choose a .torrent.'
    if (!file) fields.file = 'Choose the file to compare.'
    if (Object.keys(fields).length > 0 || !file) { setState({ ...IDLE, fields }); return }
    // The metadata first: the server reads it before the file's first byte, to know what to compute.
    const parts: FormPart[] = [
      metadataFile ? ['metadata', metadataFile, metadataFile.name] : ['metadata', metadataText.trim()],
      ['file', file, file.name],
    ]
    controller.current = new AbortController()
    setState({ ...IDLE, busy: true })
    setResult(null)
    setProgress({ loaded: 0, total: file.size, startedAt: performance.now() })
    try {
      setResult(await uploadForm<CompareAnswer>('/api/filehash/verify', parts, file.size, setProgress, controller.current.signal))
      setState(IDLE)
    } catch (error) {
      setProgress(null)
      if ((error as Error).name === 'AbortError') setState({ ...IDLE, message: 'Comparison cancelled.' })
      else setState(failure(error, ['metadata', 'file']))
    }
  }

  const dropProps = (target: 'metadata' | 'file') => ({
    onDragOver: (event: DragEvent) => { event.preventDefault(); setDragging(target) },
    onDragLeave: () => setDragging(null),
    onDrop: (event: DragEvent) => {
      event.preventDefault()
      setDragging(null)
      const dropped = event.dataTransfer?.files[0]
      if (!dropped) return
      if (target === 'file') setFile(dropped)
      else setMetadataFile(dropped)
      setResult(null)
    },
  })

  const elapsed = progress ? (performance.now() - progress.startedAt) / 1000 : 0
  const rate = progress && elapsed > 0 ? progress.loaded / elapsed : 0
  const fileSize = file?.size ?? 0
  const fileLoaded = progress && progress.total > 0 ? Math.min(fileSize, Math.round(progress.loaded / progress.total * fileSize)) : 0

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">Compare with a store</h2>
      <p class="meta">Is this file the object a store or a peer-to-peer link describes? Paste what the store reports and choose the file; each field is checked against the file's own content hash.</p>
      <div class={`drop ${dragging === 'metadata' ? 'dragging' : ''}`} {...dropProps('metadata')}>
        <Field id="compare-metadata" label="Metadata" error={state.fields.metadata}
          hint="Paste it whole: aws s3api head-object --checksum-mode ENABLED, gcloud storage objects describe --format=json, az storage blob show, Dropbox get_metadata, a OneDrive driveItem, a magnet link, or git ls-tree -l lines.">
          <textarea {...describedBy('compare-metadata', state.fields.metadata, true)} rows={6} class="mono" spellcheck={false} autocomplete="off"
            autocapitalize="off" value={metadataText} disabled={metadataFile !== null}
            onInput={(event) => { setMetadataText(event.currentTarget.value); setResult(null) }} />
        </Field>
        <Field id="compare-metadata-file" label="Metadata file" hint="Optional: a .torrent (its pieces are checked one by one), or a saved JSON file; used instead of the pasted text.">
          <input type="file" {...describedBy('compare-metadata-file', undefined, true)}
            onChange={(event) => { setMetadataFile(event.currentTarget.files?.[0] ?? null); setResult(null) }} />
        </Field>
        {metadataFile && <p class="meta">Metadata: <strong>{metadataFile.name}</strong>, {formatBytes(metadataFile.size)} <button type="button" onClick={() => { setMetadataFile(null); setResult(null) }}>Use the pasted text</button></p>}
      </div>
      <div class={`drop ${dragging === 'file' ? 'dragging' : ''}`} {...dropProps('file')}>
        <Field id="compare-file" label="File" error={state.fields.file} hint="Drop the file here, or choose it. It is streamed to the server once, never read whole into this page.">
          <input type="file" {...describedBy('compare-file', state.fields.file, true)}
            onChange={(event) => { setFile(event.currentTarget.files?.[0] ?? null); setResult(null) }} />
        </Field>
        {file && <p class="meta" aria-live="polite">Selected: <strong>{file.name}</strong>, {formatBytes(file.size)}</p>}
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy}>Compare</button>
        {state.busy && <button type="button" onClick={() => controller.current?.abort()}>Cancel</button>}
      </div>
      {progress && state.busy && (
        <div class="progress">
          <progress aria-label="Upload progress" max={fileSize || 1} value={fileSize ? fileLoaded : 0} />
          <p class="meta" aria-live="off">{formatBytes(fileLoaded)} of {formatBytes(fileSize)} · {formatBytes(Math.round(rate))}/s</p>
        </div>
      )}
      <FormStatus state={state} />
      {result && (
        <div class="result" aria-live="polite">
          <p class={`verdict-text ${result.verdict === 'match' ? 'match' : result.verdict === 'mismatch' ? 'no-match' : ''}`} role="status">{summary(result)}</p>
          <p class="meta">{file?.name ?? 'The file'}, {formatBytes(result.size)}</p>
          <table class="digests checks compare">
            <caption class="visually-hidden">Each field's verdict</caption>
            <thead><tr><th scope="col">Field</th><th scope="col">Verdict</th><th scope="col">Values</th><th scope="col">Details</th></tr></thead>
            <tbody>
              {result.fields.map((field, index) => (
                <tr key={`${index}-${field.field}`} class={field.verdict === 'match' ? 'status-ok' : field.verdict === 'mismatch' ? 'status-failed' : ''}>
                  <th scope="row">{field.field}</th>
                  <td class={`status ${VERDICT_CLASS[field.verdict]}`}>{VERDICT_TEXT[field.verdict]}</td>
                  <td class="mono">
                    <div>expected {field.expected}</div>
                    {field.actual !== undefined && <div>actual {field.actual}</div>}
                  </td>
                  <td>
                    <div>{field.algorithm}</div>
                    {field.partSize !== undefined && <div>part size {formatBytes(field.partSize)}{field.partSize >= 1024 ? ` (${field.partSize} bytes)` : ''}</div>}
                    {field.reason !== undefined && <div>{field.reason}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </form>
  )
}

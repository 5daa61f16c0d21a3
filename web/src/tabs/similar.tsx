/**
 * Similar: what a file or image is like. The file goes to POST /api/filehash for its similarity
 * hashes (ssdeep; TLSH from 50 bytes; PDQ, with its rotations and flips, for an image), then each
 * hash to POST /api/similarity/match as one batch, so a type without a bank says so on its own line
 * rather than failing the others. A second file, when chosen, is hashed the same way and each pair
 * of hashes compared by POST /api/similarity/compare.
 */
import { useRef, useState } from 'preact/hooks'
import { api, upload, type UploadProgress } from '../api'
import { Field, FormStatus, IDLE, describedBy, failure, type RequestState } from '../components'
import { formatBytes } from './file'

interface Pdq { hash: string, quality: number, dihedral?: Record<string, string> }
interface Hashed { name: string, size: number, hashes: { ssdeep?: string, tlsh?: string, pdq?: Pdq } }
interface Match { bank: string, id: string, label: string | null, distance?: number, score?: number, variant?: string }
interface MatchAnswer { algorithm: string, banks: string[], maxDistance?: number, minScore?: number, matches: Match[], truncated: boolean }
type MatchEntry = MatchAnswer | { problem: { detail?: string, title?: string } }
interface Compared { algorithm: string, distance?: number, score?: number, similar: boolean, threshold: number }

const ORDER = ['ssdeep', 'tlsh', 'pdq'] as const
type Algorithm = typeof ORDER[number]
const NAMES: Record<Algorithm, string> = { ssdeep: 'ssdeep', tlsh: 'TLSH', pdq: 'PDQ' }

/** The hashes a file can have: TLSH needs 50 bytes, PDQ an image. */
function algorithmsFor(file: File): Algorithm[] {
  return ORDER.filter((name) => name === 'ssdeep' || (name === 'tlsh' && file.size >= 50) || (name === 'pdq' && file.type.startsWith('image/')))
}

const hashText = (hashed: Hashed, name: Algorithm): string | undefined => (name === 'pdq' ? hashed.hashes.pdq?.hash : hashed.hashes[name])

function MatchList(props: { name: Algorithm, entry: MatchEntry }) {
  const { entry } = props
  if ('problem' in entry) return <p class="meta">{NAMES[props.name]}: {entry.problem.detail ?? entry.problem.title}</p>
  const measure = entry.minScore !== undefined ? `score at least ${entry.minScore}` : `distance at most ${entry.maxDistance ?? 0}`
  const where = `${entry.banks.length === 1 ? 'bank' : 'banks'} ${entry.banks.join(', ')}`
  if (entry.matches.length === 0) return <p class="meta">{NAMES[props.name]}: no match in {where} ({measure}).</p>
  return (
    <table class="digests similar">
      <caption>{NAMES[props.name]}: {entry.matches.length}{entry.truncated ? '+' : ''} {entry.matches.length === 1 ? 'match' : 'matches'} in {where} ({measure})</caption>
      <thead><tr><th scope="col">Bank</th><th scope="col">Id</th><th scope="col">Label</th><th scope="col">{entry.minScore !== undefined ? 'Score' : 'Distance'}</th></tr></thead>
      <tbody>
        {entry.matches.map((match) => (
          <tr key={`${match.bank}/${match.id}`}>
            <th scope="row">{match.bank}</th>
            <td class="mono">{match.id}</td>
            <td>{match.label ?? ''}</td>
            <td>{match.score ?? match.distance}{match.variant && match.variant !== 'original' ? ` (${match.variant})` : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export function SimilarTab() {
  const [file, setFile] = useState<File | null>(null)
  const [other, setOther] = useState<File | null>(null)
  const [dragging, setDragging] = useState(false)
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<{ hashed: Hashed, matches: Partial<Record<Algorithm, MatchEntry>>, compared: Array<[Algorithm, Compared]> | null } | null>(null)
  const controller = useRef<AbortController | null>(null)

  const hash = (chosen: File, signal: AbortSignal) => {
    const algorithms = algorithmsFor(chosen)
    return upload<Hashed>('/api/filehash', [['algorithms', algorithms.join(',')], ['dihedral', 'true']], chosen, setProgress, signal)
  }

  const submit = async (event: Event) => {
    event.preventDefault()
    if (!file) { setState({ ...IDLE, fields: { file: 'Choose a file or an image first.' } }); return }
    controller.current = new AbortController()
    const signal = controller.current.signal
    setState({ ...IDLE, busy: true })
    setResult(null)
    setProgress({ loaded: 0, total: file.size, startedAt: performance.now() })
    try {
      const hashed = await hash(file, signal)
      const present = ORDER.filter((name) => hashText(hashed, name) !== undefined)
      const items = present.map((name) => ({ algorithm: name, hash: hashText(hashed, name)!, ...(name === 'pdq' && hashed.hashes.pdq?.dihedral ? { dihedral: hashed.hashes.pdq.dihedral } : {}) }))
      const answer = await api<{ results: MatchEntry[] }>('/api/similarity/match', { items }, signal)
      const matches = Object.fromEntries(present.map((name, index) => [name, answer.results[index]!]))
      let compared: Array<[Algorithm, Compared]> | null = null
      if (other) {
        const second = await hash(other, signal)
        const both = present.filter((name) => hashText(second, name) !== undefined)
        compared = await Promise.all(both.map(async (name): Promise<[Algorithm, Compared]> => [name, await api<Compared>('/api/similarity/compare', { algorithm: name, a: hashText(hashed, name), b: hashText(second, name) }, signal)]))
      }
      setResult({ hashed, matches, compared })
      setState(IDLE)
    } catch (error) {
      if ((error as Error).name === 'AbortError') setState({ ...IDLE, message: 'Cancelled.' })
      else setState(failure(error, ['file']))
    }
    setProgress(null)
  }

  const onDrop = (event: DragEvent) => {
    event.preventDefault()
    setDragging(false)
    const dropped = event.dataTransfer?.files
    if (!dropped?.[0]) return
    setFile(dropped[0])
    if (dropped[1]) setOther(dropped[1])
    setResult(null)
  }

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">Similar files and images</h2>
      <p class="meta">What is this like? Its ssdeep and TLSH (files) and PDQ (images), and the entries of this server's similarity banks within their thresholds. Choose a second file to compare the two.</p>
      <div class={`drop ${dragging ? 'dragging' : ''}`} onDragOver={(event) => { event.preventDefault(); setDragging(true) }} onDragLeave={() => setDragging(false)} onDrop={onDrop}>
        <Field id="similar-file" label="File or image" error={state.fields.file} hint="Drop it here (two at once to compare them), or choose it. JPEG, PNG, WebP and GIF images also get PDQ.">
          <input type="file" {...describedBy('similar-file', state.fields.file, true)} onChange={(event) => { setFile(event.currentTarget.files?.[0] ?? null); setResult(null) }} />
        </Field>
        {file && <p class="meta" aria-live="polite">Selected: <strong>{file.name}</strong>, {formatBytes(file.size)}</p>}
        <Field id="similar-other" label="Compare with" hint="Optional: a second file or image, compared hash by hash.">
          <input type="file" {...describedBy('similar-other', undefined, true)} onChange={(event) => { setOther(event.currentTarget.files?.[0] ?? null); setResult(null) }} />
        </Field>
        {other && <p class="meta">Compare with: <strong>{other.name}</strong>, {formatBytes(other.size)} <button type="button" onClick={() => { setOther(null); setResult(null) }}>Remove</button></p>}
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy}>Find similar</button>
        {state.busy && <button type="button" onClick={() => controller.current?.abort()}>Cancel</button>}
      </div>
      {progress && state.busy && <progress aria-label="Upload progress" max={progress.total || 1} value={progress.loaded} />}
      <FormStatus state={state} />
      {result && (
        <div class="result" aria-live="polite">
          <table class="digests">
            <caption class="visually-hidden">Similarity hashes of {result.hashed.name}</caption>
            <thead><tr><th scope="col">Hash</th><th scope="col">Value</th></tr></thead>
            <tbody>
              {ORDER.filter((name) => hashText(result.hashed, name) !== undefined).map((name) => (
                <tr key={name}><th scope="row">{NAMES[name]}</th><td class="mono">{hashText(result.hashed, name)}{name === 'pdq' ? ` (quality ${result.hashed.hashes.pdq?.quality})` : ''}</td></tr>
              ))}
            </tbody>
          </table>
          {ORDER.map((name) => result.matches[name] && <MatchList key={name} name={name} entry={result.matches[name]!} />)}
          {result.compared && (
            <table class="digests compared">
              <caption>Compared with {other?.name}</caption>
              <thead><tr><th scope="col">Hash</th><th scope="col">Result</th></tr></thead>
              <tbody>
                {result.compared.map(([name, compared]) => (
                  <tr key={name}>
                    <th scope="row">{NAMES[name]}</th>
                    <td class={compared.similar ? 'match' : ''}>{compared.similar ? 'Similar' : 'Not similar'}: {compared.score !== undefined ? `score ${compared.score}, at least ${compared.threshold}` : `distance ${compared.distance}, at most ${compared.threshold}`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </form>
  )
}

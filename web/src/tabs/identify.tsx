/**
 * Identify: POST /api/identify with one hash, or `hashes` for several (one per line). Each
 * candidate shows its confidence as a meter, its hashcat mode and John format, its variants, and
 * "Verify with this", which opens Verify with the hash and algorithm filled in.
 */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { FormStatus, IDLE, TextArea, failure, type RequestState } from '../components'

interface Candidate {
  algorithm: string, displayName: string, confidence: number, hashcat: number | null, john: string | null,
  category: string, description: string, verifiable: boolean, params?: Record<string, string | number>,
  variants?: Array<{ hashcat: number, displayName: string }>
}
interface Identification { length: number, matches: Candidate[] }

/** How many candidates to show per hash before "show all". */
const SHOWN = 5

function Candidates(props: { input: string, identification: Identification, index: number, onVerify: (hash: string, algorithm: string | null) => void }) {
  const [all, setAll] = useState(false)
  const { matches } = props.identification
  const shown = all ? matches : matches.slice(0, SHOWN)
  const headingId = `identify-result-${props.index}`
  return (
    <section class="identification" aria-labelledby={headingId}>
      <h3 id={headingId} class="mono">{props.input}</h3>
      {matches.length === 0 && <p>No known format matches this string.</p>}
      <ol class="candidates">
        {shown.map((candidate, rank) => {
          const percent = Math.round(candidate.confidence * 1000) / 10
          const meterId = `identify-${props.index}-${rank}`
          return (
            <li key={`${candidate.algorithm}-${candidate.hashcat}`} class="candidate">
              <div class="candidate-head">
                <strong id={`${meterId}-name`}>{candidate.displayName}</strong>
                <span class="category">{candidate.category}</span>
              </div>
              <div class="confidence">
                <meter id={meterId} role="meter" min={0} max={100} value={percent} aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}
                  aria-valuetext={`${percent}%`} aria-label={`Confidence for ${candidate.displayName}`} />
                <span aria-hidden="true">{percent}%</span>
              </div>
              <p class="description">{candidate.description}</p>
              <dl class="facts">
                <dt>hashcat mode</dt><dd>{candidate.hashcat ?? '—'}</dd>
                <dt>John format</dt><dd>{candidate.john ?? '—'}</dd>
                {candidate.params && Object.entries(candidate.params).map(([name, value]) => [<dt key={`${name}-t`}>{name}</dt>, <dd key={`${name}-d`} class="mono">{String(value)}</dd>])}
              </dl>
              {candidate.variants && candidate.variants.length > 0 && (
                <details>
                  <summary>{candidate.variants.length} variants with the same syntax</summary>
                  <ul class="variants">{candidate.variants.map((variant) => <li key={variant.hashcat}>{variant.displayName} (hashcat {variant.hashcat})</li>)}</ul>
                </details>
              )}
              {candidate.verifiable && (
                <button type="button" onClick={() => props.onVerify(props.input, candidate.algorithm)}>
                  Verify with this<span class="visually-hidden">: {candidate.displayName}</span>
                </button>
              )}
            </li>
          )
        })}
      </ol>
      {matches.length > SHOWN && (
        <button type="button" class="link" onClick={() => setAll(!all)}>{all ? 'Show fewer' : `Show all ${matches.length} candidates`}</button>
      )}
    </section>
  )
}

export function IdentifyTab(props: { onVerify: (hash: string, algorithm: string | null) => void }) {
  const [text, setText] = useState('')
  const [state, setState] = useState<RequestState>(IDLE)
  const [results, setResults] = useState<Array<[string, Identification]> | null>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '')
    setResults(null)
    if (lines.length === 0) { setState({ ...IDLE, fields: { hash: 'Paste a hash, or several, one per line.' } }); return }
    setState({ ...IDLE, busy: true })
    try {
      if (lines.length === 1) {
        const answer = await api<Identification>('/api/identify', { hash: lines[0] })
        setResults([[lines[0]!, answer]])
      } else {
        const answer = await api<{ results: Identification[] }>('/api/identify', { hashes: lines })
        setResults(answer.results.map((identification, index) => [lines[index]!, identification]))
      }
      setState(IDLE)
    } catch (error) {
      const next = failure(error, ['hash', 'hashes'])
      if (next.fields.hashes) next.fields.hash = next.fields.hashes
      setState(next)
    }
  }

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">Identify</h2>
      <TextArea id="identify-hash" label="Hash" value={text} onInput={setText} error={state.fields.hash} rows={4} mono
        hint="One hash per line; user:hash, shadow and htpasswd lines work too" />
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy}>Identify</button>
        {state.busy && <span class="busy" aria-live="polite">Working…</span>}
      </div>
      <FormStatus state={state} />
      {results && (
        <div class="result" aria-live="polite">
          {results.map(([input, identification], index) => (
            <Candidates key={`${index}-${input}`} input={input} identification={identification} index={index} onVerify={props.onVerify} />
          ))}
        </div>
      )}
    </form>
  )
}

/**
 * Identify: POST /api/identify with one hash, or a pasted list or file (potfile, --username list,
 * secretsdump or Responder output…) sent as one multi-line string of `hashes`. Each candidate
 * shows its confidence as a meter, its hashcat mode and John format, the commands to run next,
 * its variants, and "Verify with this", which opens Verify with the hash and algorithm filled in.
 * A list gets the summary table (lines per format); a long one a table of first answers per line
 * rather than a card per line.
 */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { FormStatus, IDLE, TextArea, failure, type RequestState } from '../components'

interface Candidate {
  algorithm: string, displayName: string, confidence: number, hashcat: number | null, john: string | null,
  category: string, description: string, verifiable: boolean, verifyAlgorithm?: string, params?: Record<string, string | number>,
  variants?: Array<{ hashcat: number, displayName: string }>, commands?: { hashcat?: string, john?: string }, withheld?: string[]
}
interface Identification {
  length: number, matches: Candidate[], ambiguous?: boolean, normalized?: string[], user?: string,
  item?: number, line?: number, omitted?: number
}
interface SummaryRow { algorithm: string, displayName: string, hashcat: number | null, john: string | null, count: number }
interface Batch { results: Identification[], summary: SummaryRow[], unidentified: number, skipped: number }

/** How many candidates to show per hash before "show all". */
const SHOWN = 5
/** Up to this many lines get a card each; longer lists get one table row per line. */
const CARDS_UP_TO = 20
/** Rows of the per-line table shown at once. */
const ROWS_SHOWN = 200

const percentOf = (confidence: number): number => Math.round(confidence * 1000) / 10

function Notes(props: { identification: Identification }) {
  const { normalized, ambiguous, user } = props.identification
  if (!normalized && !ambiguous && !user) return null
  return (
    <ul class="identify-notes">
      {user && <li>User: <span class="mono">{user}</span></li>}
      {normalized && <li>Removed before matching: {normalized.join(', ')}</li>}
      {ambiguous && <li><strong>Ambiguous:</strong> the first candidates are close; try them in order.</li>}
    </ul>
  )
}

/** `input` is the string verify would take; `title`, the line as shown (without a plaintext). */
function Candidates(props: { input: string, title: string, identification: Identification, index: number, onVerify: (hash: string, algorithm: string | null) => void }) {
  const [all, setAll] = useState(false)
  const { matches } = props.identification
  const shown = all ? matches : matches.slice(0, SHOWN)
  const headingId = `identify-result-${props.index}`
  return (
    <section class="identification" aria-labelledby={headingId}>
      <h3 id={headingId} class="mono">{props.title}</h3>
      <Notes identification={props.identification} />
      {matches.length === 0 && <p>No known format matches this string.</p>}
      <ol class="candidates">
        {shown.map((candidate, rank) => {
          const percent = percentOf(candidate.confidence)
          const meterId = `identify-${props.index}-${rank}`
          return (
            <li key={`${candidate.algorithm}-${candidate.hashcat}-${rank}`} class="candidate">
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
                {candidate.withheld?.map((name) => [<dt key={`${name}-t`}>{name}</dt>, <dd key={`${name}-d`} class="withheld">not shown: read from after the last colon, where a potfile line has its plaintext</dd>])}
              </dl>
              {candidate.commands && (
                <dl class="identify-commands">
                  {candidate.commands.hashcat && [<dt key="h">hashcat</dt>, <dd key="hc"><code>{candidate.commands.hashcat}</code></dd>]}
                  {candidate.commands.john && [<dt key="j">John</dt>, <dd key="jc"><code>{candidate.commands.john}</code></dd>]}
                </dl>
              )}
              {candidate.variants && candidate.variants.length > 0 && (
                <details>
                  <summary>{candidate.variants.length} variants with the same syntax</summary>
                  <ul class="variants">{candidate.variants.map((variant) => <li key={variant.hashcat}>{variant.displayName} (hashcat {variant.hashcat})</li>)}</ul>
                </details>
              )}
              {candidate.verifiable && (
                <button type="button" onClick={() => props.onVerify(props.input, candidate.verifyAlgorithm ?? candidate.algorithm)}>
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

function Summary(props: { batch: Batch }) {
  const { summary, unidentified, skipped, results } = props.batch
  return (
    <section class="identify-summary" aria-labelledby="identify-summary-heading">
      <h3 id="identify-summary-heading">Summary</h3>
      <p class="meta">
        {results.length} {results.length === 1 ? 'line' : 'lines'} read by first match{unidentified > 0 ? `; ${unidentified} not identified` : ''}
        {skipped > 0 ? `; ${skipped} blank or tool status ${skipped === 1 ? 'line' : 'lines'} skipped` : ''}.
      </p>
      <table class="digests identify-table">
        <thead><tr><th scope="col">Format</th><th scope="col">hashcat mode</th><th scope="col">John format</th><th scope="col">Lines</th></tr></thead>
        <tbody>
          {summary.map((row) => (
            <tr key={`${row.algorithm}-${row.hashcat}-${row.displayName}`}>
              <th scope="row">{row.displayName}</th>
              <td>{row.hashcat ?? '—'}</td>
              <td>{row.john ?? '—'}</td>
              <td class="identify-count">{row.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}

/**
 * A line as the page shows it: a potfile line without its plaintext, and a line whose reading
 * withheld what followed its last colon with that part as `…` (the server did not send it back;
 * the page does not show it either).
 */
function withoutPlaintext(result: Identification, original: string): string {
  const colon = original.lastIndexOf(':')
  if (colon < 0) return original
  if (result.normalized?.[0] === 'potfile-plaintext') return original.slice(0, colon)
  return result.matches.some((match) => match.withheld !== undefined) ? `${original.slice(0, colon)}:…` : original
}

/** A line as shown in the per-line table: without a plaintext, cut to a readable width. */
function shownLine(result: Identification, lines: string[]): string {
  const hash = withoutPlaintext(result, result.line === undefined ? '' : (lines[result.line - 1] ?? '').trim())
  return hash.length > 48 ? `${hash.slice(0, 47)}…` : hash
}

function LineTable(props: { batch: Batch, lines: string[] }) {
  const [shown, setShown] = useState(ROWS_SHOWN)
  const rows = props.batch.results.slice(0, shown)
  return (
    <section class="identify-lines" aria-labelledby="identify-lines-heading">
      <h3 id="identify-lines-heading">First match per line</h3>
      <table class="digests identify-table">
        <thead><tr><th scope="col">Line</th><th scope="col">Text</th><th scope="col">User</th><th scope="col">First match</th><th scope="col">Confidence</th><th scope="col">hashcat mode</th></tr></thead>
        <tbody>
          {rows.map((result, index) => {
            const first = result.matches[0]
            return (
              <tr key={`${result.item ?? 0}-${result.line ?? index}`}>
                <th scope="row">{result.line ?? index + 1}</th>
                <td class="mono identify-text">{shownLine(result, props.lines)}</td>
                <td class="mono">{result.user ?? ''}</td>
                <td>{first ? first.displayName : 'not identified'}{result.ambiguous ? ' (ambiguous)' : ''}</td>
                <td>{first ? `${percentOf(first.confidence)}%` : '—'}</td>
                <td>{first?.hashcat ?? '—'}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
      {props.batch.results.length > shown && (
        <button type="button" class="link" onClick={() => setShown(shown + ROWS_SHOWN)}>
          Show {Math.min(ROWS_SHOWN, props.batch.results.length - shown)} more of {props.batch.results.length} lines
        </button>
      )}
    </section>
  )
}

export function IdentifyTab(props: { onVerify: (hash: string, algorithm: string | null) => void }) {
  const [text, setText] = useState('')
  const [potfile, setPotfile] = useState(false)
  const [popular, setPopular] = useState(false)
  const [state, setState] = useState<RequestState>(IDLE)
  const [single, setSingle] = useState<[string, Identification] | null>(null)
  const [batch, setBatch] = useState<{ batch: Batch, lines: string[] } | null>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    const lines = text.split(/\r\n|\r|\n/)
    const filled = lines.filter((line) => line.trim() !== '')
    setSingle(null)
    setBatch(null)
    if (filled.length === 0) { setState({ ...IDLE, fields: { hash: 'Paste a hash, or several, one per line.' } }); return }
    setState({ ...IDLE, busy: true })
    const options = { ...(potfile ? { potfile: true } : {}), ...(popular ? { popular: true } : {}) }
    try {
      if (filled.length === 1) {
        const answer = await api<Identification>('/api/identify', { hash: filled[0]!.trim(), ...options })
        setSingle([filled[0]!.trim(), answer])
      } else {
        // The whole paste as one string: the server reads it line by line, skips blank lines and
        // tool chatter, and numbers each result by its line.
        const answer = await api<Batch>('/api/identify', { hashes: [text], ...options })
        setBatch({ batch: answer, lines })
      }
      setState(IDLE)
    } catch (error) {
      const next = failure(error, ['hash', 'hashes'])
      if (next.fields.hashes) next.fields.hash = next.fields.hashes
      setState(next)
    }
  }

  const lineOf = (result: Identification, lines: string[]): string => result.line === undefined ? '' : (lines[result.line - 1] ?? '').trim()
  /** What "Verify with this" takes: the line, less a potfile plaintext. */
  const verifiedText = (result: Identification, original: string): string =>
    result.normalized?.[0] === 'potfile-plaintext' ? withoutPlaintext(result, original) : original

  return (
    <form onSubmit={submit} noValidate>
      <h2 class="visually-hidden">Identify</h2>
      <TextArea id="identify-hash" label="Hash" value={text} onInput={setText} error={state.fields.hash} rows={4} mono
        hint="One hash per line, or a whole file: user:hash, shadow, htpasswd, pwdump/secretsdump and Responder lines; quotes, bullets and trailing commas are removed. A plaintext is never sent back: a potfile's (check Potfile) is dropped first, and without the box nothing read from after a line's last colon (hash:salt, hash:plain) is returned or shown." />
      <div class="identify-options">
        <label><input type="checkbox" checked={potfile} onChange={(event) => setPotfile(event.currentTarget.checked)} /> Potfile (hash:plain lines): the server drops each plaintext before reading the line; only the hash is identified</label>
        <label><input type="checkbox" checked={popular} onChange={(event) => setPopular(event.currentTarget.checked)} /> Common formats only</label>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy}>Identify</button>
        {state.busy && <span class="busy" aria-live="polite">Working…</span>}
      </div>
      <FormStatus state={state} />
      {single && (
        <div class="result" aria-live="polite">
          <Candidates input={verifiedText(single[1], single[0])} title={withoutPlaintext(single[1], single[0])} identification={single[1]} index={0} onVerify={props.onVerify} />
        </div>
      )}
      {batch && (
        <div class="result" aria-live="polite">
          <Summary batch={batch.batch} />
          {batch.batch.results.length <= CARDS_UP_TO
            ? batch.batch.results.map((identification, index) => (
              <Candidates key={`${index}-${identification.line}`} input={verifiedText(identification, lineOf(identification, batch.lines))}
                title={withoutPlaintext(identification, lineOf(identification, batch.lines))} identification={identification} index={index} onVerify={props.onVerify} />
            ))
            : <LineTable batch={batch.batch} lines={batch.lines} />}
        </div>
      )}
    </form>
  )
}

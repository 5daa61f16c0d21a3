/**
 * Check a password: POST /api/passwords/check (NIST SP 800-63B-4's rules: length, the common list,
 * the organization's blocklist, the user's own words, breached passwords). The password goes to
 * this server only, in the request body; the answer never contains it and the page keeps it only in
 * the field. The verdict is written out ("Acceptable" / "Not acceptable"), never colour alone.
 */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { Field, FormStatus, IDLE, describedBy, failure, type RequestState } from '../components'

interface CheckAnswer {
  acceptable: boolean
  reasons: Array<{ code: string, message: string }>
  breachCount?: number
  checked: string[]
  warnings: string[]
}

const CHECKS: Record<string, string> = {
  length: 'length', common: 'common passwords', blocklist: 'this organization\'s words', context: 'your own words', breached: 'breached passwords',
}

export function CheckTab() {
  const [password, setPassword] = useState('')
  const [shown, setShown] = useState(false)
  const [context, setContext] = useState('')
  const [state, setState] = useState<RequestState>(IDLE)
  const [result, setResult] = useState<CheckAnswer | null>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    setState({ ...IDLE, busy: true })
    setResult(null)
    const words = context.split(',').map((word) => word.trim()).filter((word) => word !== '')
    try {
      setResult(await api<CheckAnswer>('/api/passwords/check', { password, ...(words.length > 0 ? { context: words } : {}) }))
      setState(IDLE)
    } catch (error) {
      setState(failure(error, ['password', 'context']))
    }
  }

  return (
    <form onSubmit={submit} noValidate>
      <h2>Check a password</h2>
      <p class="meta">Is it long enough, and absent from the lists of common and breached passwords? The password is sent to this server only, and is not stored or logged.</p>
      <Field id="check-password" label="Password" error={state.fields.password}>
        <div class="secret">
          <input {...describedBy('check-password', state.fields.password)} {...(shown ? { type: 'text' } : { type: 'password', autocomplete: 'new-password' })}
            spellcheck={false} autocapitalize="off" value={password} onInput={(event) => setPassword(event.currentTarget.value)} />
          <button type="button" aria-pressed={shown} onClick={() => setShown(!shown)}>{shown ? 'Hide' : 'Show'}<span class="visually-hidden"> password</span></button>
        </div>
      </Field>
      <Field id="check-context" label="User name, e-mail, service name (optional)" error={state.fields.context}
        hint="Comma-separated: the password must not be built from them">
        <input {...describedBy('check-context', state.fields.context, true)} type="text" autocomplete="off" spellcheck={false}
          value={context} onInput={(event) => setContext(event.currentTarget.value)} />
      </Field>
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy}>Check</button>
        {state.busy && <span class="busy" aria-live="polite">Checking…</span>}
      </div>
      <FormStatus state={state} />
      {result && (
        <div class={`result verdict ${result.acceptable ? 'match' : 'no-match'}`} role="status">
          <p class="verdict-text"><span aria-hidden="true">{result.acceptable ? '✓' : '✗'}</span> {result.acceptable ? 'Acceptable' : 'Not acceptable'}</p>
          {result.reasons.length > 0 && <ul class="reasons">{result.reasons.map((reason) => <li key={reason.code + reason.message}>{reason.message}</li>)}</ul>}
          <p class="meta">Compared with: {result.checked.map((name) => CHECKS[name] ?? name).join(', ')}.
            {result.breachCount === 0 ? ' Not found among breached passwords.' : ''}</p>
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

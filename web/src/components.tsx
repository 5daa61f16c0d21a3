/**
 * The building blocks every tab shares: labelled fields that show their API error beside them,
 * the algorithm picker, copy buttons and the form-level status line.
 */
import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { KIND_LABELS, matchesQuery, resolveName, type AlgorithmInfo } from './algorithms'
import { ApiError, type FieldErrors } from './api'

/** Props that tie a control to its label, its hint and its error message. */
export function describedBy(id: string, error: string | undefined, hint?: boolean): { id: string, 'aria-invalid'?: 'true', 'aria-describedby'?: string } {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')
  return { id, ...(error ? { 'aria-invalid': 'true' as const } : {}), ...(ids ? { 'aria-describedby': ids } : {}) }
}

export function Field(props: { id: string, label: string, error?: string | undefined, hint?: string, children: ComponentChildren, class?: string }) {
  return (
    <div class={`field ${props.class ?? ''}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && <p class="hint" id={`${props.id}-hint`}>{props.hint}</p>}
      {props.error && <p class="field-error" id={`${props.id}-error`}>{props.error}</p>}
    </div>
  )
}

export function TextArea(props: { id: string, label: string, value: string, onInput: (value: string) => void, error?: string | undefined, hint?: string, rows?: number, mono?: boolean }) {
  return (
    <Field id={props.id} label={props.label} error={props.error} {...(props.hint ? { hint: props.hint } : {})}>
      <textarea {...describedBy(props.id, props.error, Boolean(props.hint))} rows={props.rows ?? 3} class={props.mono ? 'mono' : undefined}
        spellcheck={false} autocomplete="off" autocapitalize="off" value={props.value}
        onInput={(event) => props.onInput(event.currentTarget.value)} />
    </Field>
  )
}

export function Select(props: { id: string, label: string, value: string, options: ReadonlyArray<readonly [string, string]>, onChange: (value: string) => void, error?: string | undefined }) {
  return (
    <Field id={props.id} label={props.label} error={props.error}>
      <select {...describedBy(props.id, props.error)} value={props.value} onChange={(event) => props.onChange(event.currentTarget.value)}>
        {props.options.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
      </select>
    </Field>
  )
}

export const OUTPUT_ENCODINGS = [['hex', 'hex'], ['base64', 'base64'], ['base64url', 'base64url']] as const
export const INPUT_ENCODINGS = [['utf8', 'text (UTF-8)'], ['hex', 'hex'], ['base64', 'base64']] as const

/**
 * A native select, grouped by kind, with a search box in front of it that filters the list by
 * name, display name or alias and selects an exact alias as soon as it is typed.
 */
export function AlgorithmPicker(props: {
  id: string, algorithms: AlgorithmInfo[] | null, operation: string, value: string, onChange: (name: string) => void,
  error?: string | undefined, auto?: string, label?: string,
}) {
  const [query, setQuery] = useState('')
  const allowed = (props.algorithms ?? []).filter((algorithm) => algorithm.operations.includes(props.operation))
  const shown = allowed.filter((algorithm) => matchesQuery(algorithm, query) || algorithm.name === props.value)
  const search = (text: string) => {
    setQuery(text)
    const exact = resolveName(allowed, text)
    const first = allowed.find((algorithm) => matchesQuery(algorithm, text))
    const chosen = exact ?? first
    if (chosen && chosen.name !== props.value) props.onChange(chosen.name)
  }
  const kinds = (Object.keys(KIND_LABELS) as Array<AlgorithmInfo['kind']>).filter((kind) => shown.some((algorithm) => algorithm.kind === kind))
  const count = shown.length
  return (
    <Field id={props.id} label={props.label ?? 'Algorithm'} error={props.error} class="algorithm">
      <div class="picker">
        <input type="search" id={`${props.id}-search`} aria-label="Search algorithms by name or alias" placeholder="Search…"
          value={query} autocomplete="off" spellcheck={false} onInput={(event) => search(event.currentTarget.value)} />
        <select {...describedBy(props.id, props.error)} value={props.value} disabled={props.algorithms === null}
          onChange={(event) => props.onChange(event.currentTarget.value)}>
          {props.auto !== undefined && <option value="">{props.auto}</option>}
          {props.algorithms === null && <option value={props.value}>Loading…</option>}
          {props.algorithms !== null && props.value !== '' && !shown.some((algorithm) => algorithm.name === props.value) && <option value={props.value}>{props.value}</option>}
          {kinds.map((kind) => (
            <optgroup key={kind} label={KIND_LABELS[kind]}>
              {shown.filter((algorithm) => algorithm.kind === kind).map((algorithm) => (
                <option key={algorithm.name} value={algorithm.name}>{algorithm.displayName}{algorithm.displayName.toLowerCase() === algorithm.name ? '' : ` (${algorithm.name})`}</option>
              ))}
            </optgroup>
          ))}
        </select>
      </div>
      {query !== '' && <p class="hint" aria-live="polite">{count} {count === 1 ? 'algorithm matches' : 'algorithms match'}</p>}
    </Field>
  )
}

export function CopyButton(props: { text: string, what: string }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text)
      setCopied(true)
      setTimeout(() => setCopied(false), 1500)
    } catch {
      setCopied(false)
    }
  }
  return (
    <button type="button" class="copy" onClick={copy}>
      {copied ? 'Copied' : 'Copy'}<span class="visually-hidden"> {props.what}</span>
    </button>
  )
}

/** A digest or MAC with its copy button. */
export function Output(props: { label: string, value: string, id: string }) {
  return (
    <div class="output">
      <div class="output-head"><span id={`${props.id}-label`}>{props.label}</span><CopyButton text={props.value} what={props.label} /></div>
      <output class="mono value" id={props.id} aria-labelledby={`${props.id}-label`}>{props.value}</output>
    </div>
  )
}

/** How a request is going, for one form: the field errors and the message without a field. */
export interface RequestState { busy: boolean, fields: FieldErrors, message: string | null }
export const IDLE: RequestState = { busy: false, fields: {}, message: null }

/** The form-level message for an ApiError, when no field took it. */
export function failure(error: unknown, knownFields: string[]): RequestState {
  if (error instanceof ApiError) {
    const fields = Object.fromEntries(Object.entries(error.fields).filter(([field]) => knownFields.includes(field)))
    const placed = Object.keys(fields).length > 0
    return { busy: false, fields, message: placed && error.status !== 429 ? null : error.message }
  }
  return { busy: false, fields: {}, message: (error as Error).message }
}

export function FormStatus(props: { state: RequestState }) {
  return <p class="form-error" role="alert">{props.state.message ?? ''}</p>
}

/**
 * hashd's page: ten tabs, one per operation, each with a deep link (#/hash, #/verify, …). Every
 * panel stays mounted while hidden, so its inputs survive switching tabs. A link may also use a
 * name people guess for a tab (#/password for the Password tab, whose link is #/check); the address
 * is then corrected to the tab's own. A #/ address no tab has shows the Hash tab with a notice
 * saying so, and the address corrected, rather than the Hash tab as if it had been asked for.
 */
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { onKeyNeeded } from './api'
import { useAlgorithms } from './algorithms'
import { CheckTab } from './tabs/check'
import { ChecksumsTab } from './tabs/checksums'
import { CompareTab } from './tabs/compare'
import { FileTab } from './tabs/file'
import { HashTab } from './tabs/hash'
import { HmacTab } from './tabs/hmac'
import { IdentifyTab } from './tabs/identify'
import { SimilarTab } from './tabs/similar'
import { VerifyTab, type VerifyPrefill } from './tabs/verify'
import { WebhookTab } from './tabs/webhook'
import './style.css'

/** Each tab with its link's name (`id`) and the other names a link to it may use (lowercase). */
const TABS = [
  { id: 'hash', label: 'Hash', aliases: ['hashes', 'digest', 'digests'] },
  { id: 'verify', label: 'Verify', aliases: ['verify-password', 'verify-hash'] },
  { id: 'file', label: 'File', aliases: ['files', 'filehash', 'file-hash', 'upload'] },
  { id: 'hmac', label: 'HMAC', aliases: ['hmacs', 'mac'] },
  { id: 'identify', label: 'Identify', aliases: ['identify-hash', 'id'] },
  // Last, so the five operations' tabs keep their places (and their arrow-key order).
  { id: 'checksums', label: 'Checksums', aliases: ['checksum', 'sums', 'check-checksums', 'downloads'] },
  { id: 'check', label: 'Password', aliases: ['password', 'passwords', 'check-password', 'password-check', 'passwords-check'] },
  { id: 'webhook', label: 'Webhook', aliases: ['webhooks', 'check-webhook'] },
  { id: 'compare', label: 'Compare', aliases: ['store', 'stores', 'compare-with-a-store', 'filehash-verify', 'verify-file'] },
  { id: 'similar', label: 'Similar', aliases: ['similarity', 'match', 'matches', 'fuzzy', 'pdq', 'ssdeep', 'tlsh'] },
] as const
type TabId = typeof TABS[number]['id']
const DEFAULT_TAB: TabId = 'hash'

/** Where an address leads: its tab; the address to show instead (null: keep it); and the name no tab has, if that was asked for. */
interface Route { tab: TabId, address: string | null, unknown: string | null }

/**
 * `name` without its trailing slashes, in one pass from the end. Not /\/+$/, which recheck finds
 * polynomial: a backtracking engine tries it from every slash of a run (3.5 s for 50,000 slashes and a
 * letter in Node's V8), so a crafted link could freeze the page in a browser without Chromium's
 * fallback to a linear engine.
 */
function withoutTrailingSlashes(name: string): string {
  let end = name.length
  while (end > 0 && name.charCodeAt(end - 1) === 0x2f) end--
  return name.slice(0, end)
}

/**
 * Reads `#/name`: a tab's own name, or one of its aliases, in any case, with or without a trailing
 * slash. An address that is not a route (none, `#privacy`) opens the default tab as it is.
 */
function routeOf(hash: string): Route {
  if (!hash.startsWith('#/')) return { tab: DEFAULT_TAB, address: null, unknown: null }
  let wanted: string
  try {
    wanted = decodeURIComponent(hash.slice(2))
  } catch {
    wanted = hash.slice(2)
  }
  const name = withoutTrailingSlashes(wanted.trim().toLowerCase())
  if (name === '') return { tab: DEFAULT_TAB, address: `#/${DEFAULT_TAB}`, unknown: null }
  const tab = TABS.find((each) => each.id === name || each.label.toLowerCase() === name || (each.aliases as readonly string[]).includes(name))
  if (tab === undefined) return { tab: DEFAULT_TAB, address: `#/${DEFAULT_TAB}`, unknown: wanted.slice(0, 60) }
  return { tab: tab.id, address: hash === `#/${tab.id}` ? null : `#/${tab.id}`, unknown: null }
}

/** Asks for an API key after a 401; resolves with the key, or null if the user cancels. */
function KeyDialog(props: { request: { reason: string, resolve: (key: string | null) => void } | null }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [key, setKey] = useState('')
  useEffect(() => {
    if (props.request && !dialog.current?.open) dialog.current?.showModal()
  }, [props.request])
  const close = (value: string | null) => {
    dialog.current?.close()
    props.request?.resolve(value)
    setKey('')
  }
  return (
    <dialog ref={dialog} aria-labelledby="key-title" onCancel={() => close(null)}>
      <form method="dialog" onSubmit={(event) => { event.preventDefault(); close(key.trim() || null) }}>
        <h2 id="key-title">API key</h2>
        <p>{props.request?.reason} It is kept in this tab only (sessionStorage) and sent as a Bearer token.</p>
        <div class="field">
          <label for="api-key">API key</label>
          <input id="api-key" type="password" autocomplete="off" value={key} onInput={(event) => setKey(event.currentTarget.value)} />
        </div>
        <div class="actions">
          <button type="submit" class="primary">Use key</button>
          <button type="button" onClick={() => close(null)}>Cancel</button>
        </div>
      </form>
    </dialog>
  )
}

function App() {
  const [route, setRoute] = useState<Route>(() => routeOf(location.hash))
  const active = route.tab
  const [prefill, setPrefill] = useState<VerifyPrefill | null>(null)
  const [keyRequest, setKeyRequest] = useState<{ reason: string, resolve: (key: string | null) => void } | null>(null)
  const { algorithms, error } = useAlgorithms()
  const tabRefs = useRef<Array<HTMLAnchorElement | null>>([])

  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash))
    window.addEventListener('hashchange', follow)
    onKeyNeeded((reason) => new Promise((resolve) => setKeyRequest({ reason, resolve })))
    return () => window.removeEventListener('hashchange', follow)
  }, [])
  useEffect(() => { document.title = `${TABS.find((tab) => tab.id === active)?.label} · hashd` }, [active])
  // The tab's own address in place of the one typed, without a new history entry (or a hashchange).
  useEffect(() => {
    if (route.address !== null && location.hash !== route.address) history.replaceState(history.state, '', route.address)
  }, [route])

  const go = (id: TabId, focus = false) => {
    if (location.hash !== `#/${id}`) location.hash = `#/${id}`
    setRoute({ tab: id, address: null, unknown: null })
    if (focus) tabRefs.current[TABS.findIndex((tab) => tab.id === id)]?.focus()
  }
  // WAI-ARIA tabs pattern: arrows move between tabs, Home and End jump to the ends.
  const onKeyDown = (event: KeyboardEvent) => {
    const index = TABS.findIndex((tab) => tab.id === active)
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: TABS.length - 1 }[event.key]
    if (next === undefined) return
    event.preventDefault()
    go(TABS[(next + TABS.length) % TABS.length]!.id, true)
  }
  const verifyWith = (hash: string, algorithm: string | null) => {
    setPrefill({ hash, algorithm, at: Date.now() })
    go('verify')
  }

  return (
    <>
      <a class="skip" href={`#panel-${active}`} onClick={(event) => { event.preventDefault(); document.getElementById(`panel-${active}`)?.focus() }}>Skip to the form</a>
      <header>
        <h1><span aria-hidden="true" class="logo">#</span> hashd</h1>
        <p class="tagline">Digests, password hashes, HMACs, file checksums and hash identification, on your own server.
          {' '}<a href="#privacy" onClick={(event) => { event.preventDefault(); document.getElementById('privacy')?.scrollIntoView() }}>Your inputs stay on this server.</a></p>
      </header>
      <nav>
        <div role="tablist" aria-label="Operations" onKeyDown={onKeyDown}>
          {TABS.map((tab, index) => (
            <a key={tab.id} role="tab" id={`tab-${tab.id}`} href={`#/${tab.id}`} aria-selected={active === tab.id} aria-controls={`panel-${tab.id}`}
              tabIndex={active === tab.id ? 0 : -1} ref={(element) => { tabRefs.current[index] = element }}
              onClick={(event) => { event.preventDefault(); go(tab.id) }}>{tab.label}</a>
          ))}
        </div>
      </nav>
      <main>
        {error && <p class="form-error" role="alert">{error}</p>}
        {route.unknown !== null && (
          <p class="notice" role="status">This page has no tab called “{route.unknown}”, so here is the {TABS.find((tab) => tab.id === active)?.label} tab.
            {' '}The tabs’ links are {TABS.map((tab) => `#/${tab.id}`).join(', ')}.</p>
        )}
        {TABS.map((tab) => (
          <section key={tab.id} role="tabpanel" id={`panel-${tab.id}`} aria-labelledby={`tab-${tab.id}`} hidden={active !== tab.id} tabIndex={-1}>
            {tab.id === 'hash' && <HashTab algorithms={algorithms} />}
            {tab.id === 'verify' && <VerifyTab algorithms={algorithms} prefill={prefill} />}
            {tab.id === 'file' && <FileTab algorithms={algorithms} />}
            {tab.id === 'checksums' && <ChecksumsTab algorithms={algorithms} />}
            {tab.id === 'hmac' && <HmacTab algorithms={algorithms} />}
            {tab.id === 'identify' && <IdentifyTab onVerify={verifyWith} />}
            {tab.id === 'check' && <CheckTab />}
            {tab.id === 'webhook' && <WebhookTab />}
            {tab.id === 'compare' && <CompareTab />}
            {tab.id === 'similar' && <SimilarTab />}
          </section>
        ))}
      </main>
      <footer>
        <p id="privacy"><strong>Privacy:</strong> what you type or upload here goes only to this server, the one that served this page.
          It is hashed in memory and answered, and it is not stored and not logged. Nothing is sent to any other site; this page loads no outside scripts, fonts or trackers.</p>
        <p><a href="/docs">API documentation</a> · <a href="/api/openapi.json">OpenAPI</a></p>
      </footer>
      <KeyDialog request={keyRequest} />
    </>
  )
}

render(<App />, document.getElementById('app')!)
// bench/web.ts reads these: the forms can be used from the first mark, the pickers from the second.
performance.mark('hashd:interactive')

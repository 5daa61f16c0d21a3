/**
 * The ReDoS gate: every regular expression hashd's code can run (test/helpers/regexes.ts: the
 * literals and `RegExp(…)` calls of every file under src/, the patterns built at run time, the
 * identify table as the engine compiled it, the JSON Schema patterns ajv runs on requests) is
 * checked with `recheck` (test/helpers/redos.ts). It fails on any pattern recheck finds
 * exponential, or polynomial of any degree (≥ 2), or cannot decide, unless ALLOWED names it.
 *
 * A pattern added later anywhere under src/ is checked without anyone listing it here. A pattern
 * built inside a function, once per call, is refused until it is built at load (where this
 * test sees every pattern the code can make).
 *
 * Nothing under src/ is imported before the inventory is taken (helpers/regexes.ts says why).
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { inventory, type Inventory } from './helpers/regexes.js'
import { NATIVE_PACKAGE, RedosChecker, openRepetitions, recheckBackend, type Verdict } from './helpers/redos.js'
import { skipBecause } from './helpers/tools.js'

/**
 * recheck's native binary ships in the optional package for this platform (npm installs it with
 * recheck: Linux x64, macOS, Windows), or its jar runs on a `java` on PATH. Elsewhere only its pure
 * JavaScript backend is left, tens of minutes for the whole set: the gate is skipped with the reason
 * (RECHECK_BACKEND=worker runs it anyway), and fails with HASHD_REQUIRE_TOOLS=1, as CI sets.
 */
function skipWithoutBackend(): false | string {
  if (recheckBackend() !== 'pure' || /^(?:worker|pure)$/.test(process.env.RECHECK_BACKEND ?? '')) return false
  return skipBecause(`recheck has no native binary here (npm: ${NATIVE_PACKAGE}, an optional dependency of recheck) and no java for its jar; RECHECK_BACKEND=worker runs the gate on its slow pure-JavaScript backend`)
}

/**
 * Patterns that may stay although recheck finds them polynomial: only where the input is bounded
 * small by a length check before the pattern runs. Each entry says where that bound is enforced,
 * and the worst-case time measured at the bound, with the command that measured it. There is none:
 * every pattern hashd runs is safe as written.
 */
const ALLOWED: ReadonlyArray<{ source: string, flags: string, bound: string, worstCase: string }> = []

/** Patterns hashd ran before they were rewritten, each with the degree recheck gives it: the gate must still see them. */
const FORMER = [
  { what: 'unwrap.ts sqlTupleFields, the tuple\'s tail', source: String.raw`^\)[ \t]*[,;]?[ \t]*$`, flags: '' },
  { what: 'unwrap.ts FENCE', source: String.raw`^${'```'}(?:[A-Za-z0-9_-]{1,16}[ \t]+)?([^${'`'}]{1,16384})${'```'}$`, flags: '' },
  { what: 'unwrap.ts LOG_PREFIX', source: String.raw`^\[[\w .+-]{1,24}\][ \t]+[^:]{0,48}?\bHash[ \t]*:[ \t]*(\S.{0,16383})$`, flags: '' },
  { what: 'unwrap.ts SQL_INSERT', source: String.raw`^INSERT[ \t]+INTO[ \t]+[^(]{1,256}?(?:\([^)]{0,2048}\)[ \t]*)?VALUES[ \t]*`, flags: 'i' },
  { what: 'formats.ts keepass (13400)', source: String.raw`^(?:\$keepass\$\*[12]\*(?<rounds>\d{1,10})\*[0-9]\*[!-~]{64,16384}\*1\*[!-~]{2,16384})$`, flags: '' },
  { what: 'formats.ts pkzip (17220)', source: String.raw`^(?:\$pkzip2?\$[2-8]\*[12]\*1\*0\*8\*[!-~]{8,16384}\*2\*0\*[!-~]{8,16384})$`, flags: '' },
  { what: 'formats.ts unlessZeroTail', source: '0+$', flags: '' },
]

const describeVerdict = (verdict: Verdict): string => verdict.status === 'vulnerable'
  ? `${verdict.complexity}${verdict.degree === undefined ? '' : ` (degree ${verdict.degree})`}, attack ${verdict.attack ?? '?'}`
  : `${verdict.status}${verdict.error ? ` (${verdict.error})` : ''}`

describe('ReDoS gate (recheck)', { timeout: 30 * 60_000, skip: skipWithoutBackend() }, () => {
  let found: Inventory
  const checker = new RedosChecker()

  before(async () => {
    found = await inventory()
  })

  it('finds the patterns of every part that reads client input', () => {
    const sites = found.regexes.flatMap((regex) => regex.sites)
    for (const file of ['src/identify/unwrap.ts', 'src/identify/input.ts', 'src/identify/batch.ts', 'src/checksums/list.ts', 'src/upload/multipart.ts', 'src/keys/file.ts', 'src/keys/api-keys.ts', 'src/plugins/auth.ts', 'src/routes/identify.ts', 'src/domain/hmac.ts', 'src/content-hashes/metadata/values.ts', 'src/content-hashes/metadata/git.ts']) {
      assert.ok(sites.some((site) => site.startsWith(`${file}:`)), `no pattern found in ${file}`)
    }
    // The identify table as compiled: one per row, plus the `typical` patterns and near misses.
    assert.ok(sites.filter((site) => site.startsWith('identify table: ')).length >= 400, 'the identify table')
    assert.ok(sites.some((site) => site.startsWith('identify near miss: ')), 'the near-miss rules')
    assert.ok(sites.some((site) => site.startsWith('schema: /paths/')), 'the request schemas\' patterns')
  })

  it('reaches every pattern built at run time (none is built per call, unseen)', () => {
    assert.deepEqual(found.unreached, [], `RegExp built with a computed source at ${found.unreached.join(', ')}, and not while src/ loads: build it once at load, so the gate sees it`)
  })

  it('opens counted repetitions only outside classes and escapes', () => {
    assert.equal(openRepetitions(String.raw`^a{2,5}[{1,2}]\{3\}b{0,9}?c{4}(?:d|e){1,}$`, ''), String.raw`^a+[{1,2}]\{3\}b*?c+(?:d|e)+$`)
    assert.equal(openRepetitions(String.raw`\u{1F600}{2}\p{L}{1,3}`, 'u'), String.raw`\u{1F600}+\p{L}+`)
  })

  it('flags the patterns that used to freeze the server', async () => {
    const verdicts = await checker.verdicts(FORMER)
    for (const { what, verdict } of verdicts) {
      assert.equal(verdict.status, 'vulnerable', `${what}: ${describeVerdict(verdict)}`)
    }
  })

  it('finds every pattern safe', async (t) => {
    const started = performance.now()
    const verdicts = await checker.verdicts(found.regexes)
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    const byStage = { opened: 0, exact: 0 }
    for (const { verdict } of verdicts) byStage[verdict.stage] += 1
    t.diagnostic(`${verdicts.length} distinct patterns (${found.counts.literals} literals, ${found.counts.constructed} built at run time from ${found.counts.dynamicSites} sites, ${found.counts.table} from the identify table, ${found.counts.schema} in the request schemas); `
      + `${byStage.opened} cleared opened, ${byStage.exact} checked as written; ${checker.ran} recheck runs (the rest cached) in ${seconds} s`)
    for (const { source, flags, verdict } of verdicts.filter(({ verdict }) => verdict.firstAttack !== undefined)) {
      t.diagnostic(`/${source.length > 120 ? `${source.slice(0, 120)}…` : source}/${flags}: the fuzzer's first attack (${verdict.firstAttack!.slice(0, 80)}) was not found again with longer clocks: safe`)
    }

    const allowed = (source: string, flags: string) => ALLOWED.find((entry) => entry.source === source && entry.flags === flags)
    const failures = verdicts.filter(({ source, flags, verdict }) => verdict.status !== 'safe' && !allowed(source, flags))
    assert.deepEqual(failures.map(({ source, flags, sites, verdict }) => `/${source}/${flags} at ${sites.join('; ')}: ${describeVerdict(verdict)}`), [])

    const flagged = new Set(verdicts.filter(({ verdict }) => verdict.status !== 'safe').map(({ source, flags }) => `${flags}/${source}`))
    const stale = ALLOWED.filter((entry) => !flagged.has(`${entry.flags}/${entry.source}`))
    assert.deepEqual(stale, [], 'ALLOWED lists a pattern that is gone or now safe: remove it')
  })
})

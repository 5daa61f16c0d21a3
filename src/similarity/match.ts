/**
 * Matching a hash against the similarity banks in force (bank-folder.ts): which banks to search
 * (those named, or every bank of the hash's type that the API key may search), the threshold (the
 * compare table's default unless the request gives its own), and the merge of the banks' answers
 * into one list, sorted as each bank sorts its own: distance ascending (score descending for
 * ssdeep), then bank, then the bank's own order (hash, then id). Recall is the banks' (exact: every entry within the threshold);
 * `limit` cuts the merged list and `truncated` says so.
 */
import { normalizeName } from '../algorithms/registry.js'
import { Problem, problems } from '../problem.js'
import { comparers } from './compare.js'
import type { BankSet } from './bank-folder.js'
import { BANK_TYPES, isBankHash, type Bank, type BankSearchOptions, type BankSearchResult, type BankType } from './banks/index.js'

export const MATCH_DEFAULT_LIMIT = 100
export const MATCH_MAX_LIMIT = 1000
/** The most items of one request: each is a search of every bank of its type. */
export const MATCH_MAX_ITEMS = 1000
/** The most banks one request may name. */
export const MATCH_MAX_BANKS = 64

/** PDQ's seven other hashes as /api/filehash?dihedral=true gives them, in Meta's names. */
export const DIHEDRAL_NAMES = ['rotate90', 'rotate180', 'rotate270', 'flipX', 'flipY', 'flipPlus1', 'flipMinus1'] as const
export type DihedralName = typeof DIHEDRAL_NAMES[number]

export interface MatchRequest {
  algorithm?: string
  hash?: string
  banks?: string[]
  maxDistance?: number
  minScore?: number
  limit?: number
  lengthTerm?: boolean
  /** PDQ: the other hashes of the same image; an entry matches at its least distance to any of them. */
  dihedral?: Partial<Record<DihedralName, string>>
}

export interface MatchEntry {
  bank: string
  id: string
  label: string | null
  distance?: number
  score?: number
  /** PDQ with dihedral: which of the image's hashes is nearest (`original` or one of DIHEDRAL_NAMES). */
  variant?: string
}

export interface MatchResult {
  algorithm: BankType
  /** The banks searched, by name: empty matches over no bank say nothing of the hash. */
  banks: string[]
  /** The threshold used: a distance for pdq, tlsh and the digests, a score for ssdeep. */
  maxDistance?: number
  minScore?: number
  matches: MatchEntry[]
  truncated: boolean
}

export interface MatchContext {
  /** The banks in force, or null when SIMILARITY_BANKS_DIR is not set. */
  banks: BankSet | null
  /** The banks the API key may search (its banks=), or null for every one. */
  allowed: ReadonlySet<string> | null
  /** The API key's name, for the 403. */
  keyName: string | null
}

const ALIASES = new Map<string, BankType>()
for (const type of BANK_TYPES) ALIASES.set(normalizeName(type), type)
for (const comparer of comparers) for (const alias of comparer.aliases) ALIASES.set(normalizeName(alias), comparer.name as BankType)
for (const [alias, type] of [['sha-1', 'sha1'], ['sha-256', 'sha256']] as const) ALIASES.set(normalizeName(alias), type)

const fieldError = (field: string, detail: string, message: string) =>
  problems.validation(detail, [{ pointer: `/body/${field}`, message }])

export function matchType(name: string | undefined): BankType {
  if (name === undefined) throw fieldError('algorithm', `algorithm is required: one of ${BANK_TYPES.join(', ')}`, 'required')
  const type = name.length > 64 ? undefined : ALIASES.get(normalizeName(name))
  if (type === undefined) throw fieldError('algorithm', `algorithm must be one of ${BANK_TYPES.join(', ')}`, `not one of ${BANK_TYPES.join(', ')}`)
  return type
}

const FORMS: Record<BankType, string> = {
  pdq: '64 hex digits (a 256-bit PDQ hash)',
  tlsh: 'T1 and 70 hex digits (or the 70 digits alone)',
  ssdeep: 'blocksize:hash1:hash2, as ssdeep prints it',
  md5: '32 hex digits',
  sha1: '40 hex digits',
  sha256: '64 hex digits',
}

/** The threshold of a request: the type's field, checked against its range. */
function thresholdOf(type: BankType, request: MatchRequest): { threshold: number, field: 'maxDistance' | 'minScore' } {
  const comparer = comparers.find((each) => each.name === type)
  if (comparer === undefined) {
    // An exact digest: the same bytes or nothing.
    if (request.minScore !== undefined) throw fieldError('minScore', `minScore applies to ssdeep only; ${type} banks match exact digests`, 'not for this algorithm')
    if (request.maxDistance !== undefined && request.maxDistance !== 0) throw fieldError('maxDistance', `${type} banks match exact digests: maxDistance can only be 0`, 'only 0 for an exact digest')
    return { threshold: 0, field: 'maxDistance' }
  }
  const { min, max } = comparer.thresholdRange
  if (comparer.measure === 'score') {
    if (request.maxDistance !== undefined) throw fieldError('maxDistance', 'ssdeep matches by score: give minScore, not maxDistance', 'not for ssdeep (minScore)')
    const score = request.minScore ?? comparer.defaultThreshold
    // A score of 0 would be every entry of the bank (libfuzzy scores unrelated hashes 0).
    if (!Number.isInteger(score) || score < 1 || score > max) throw fieldError('minScore', `minScore for ssdeep is an integer from 1 to ${max}`, `not an integer from 1 to ${max}`)
    return { threshold: score, field: 'minScore' }
  }
  if (request.minScore !== undefined) throw fieldError('minScore', `${type} matches by distance: give maxDistance, not minScore`, 'not for this algorithm (maxDistance)')
  const distance = request.maxDistance ?? comparer.defaultThreshold
  if (!Number.isInteger(distance) || distance < min || distance > max) throw fieldError('maxDistance', `maxDistance for ${type} is an integer from ${min} to ${max}`, `not an integer from ${min} to ${max}`)
  return { threshold: distance, field: 'maxDistance' }
}

/** The query hashes: the hash, and for PDQ the dihedral ones, with their names. */
function queriesOf(type: BankType, request: MatchRequest): { hashes: string[], names: string[] } {
  const hash = request.hash
  if (hash === undefined) throw fieldError('hash', 'hash is required', 'required')
  if (!isBankHash(type, hash)) throw fieldError('hash', `hash is not a ${type} hash (${FORMS[type]})`, `not a ${type} hash`)
  const hashes = [hash]
  const names = ['original']
  if (request.dihedral !== undefined) {
    if (type !== 'pdq') throw fieldError('dihedral', `dihedral applies to PDQ only, not ${type}`, 'not for this algorithm')
    for (const name of DIHEDRAL_NAMES) {
      const other = request.dihedral[name]
      if (other === undefined) continue
      if (!isBankHash('pdq', other)) throw fieldError(`dihedral/${name}`, `dihedral.${name} is not a pdq hash (${FORMS.pdq})`, 'not a pdq hash')
      hashes.push(other)
      names.push(name)
    }
  }
  return { hashes, names }
}

/** The 403 of a bank outside the API key's banks=. Bank names are the operator's, not secrets: it is named. */
function bankForbidden(keyName: string | null, name: string, index: number): Problem {
  return new Problem(403, 'urn:hashd:problem:insufficient-scope', 'Forbidden',
    `The API key ${keyName ?? ''} may not search the bank ${name}: its banks= in API_KEYS_FILE does not list it`,
    { extensions: { scope: 'banks', errors: [{ pointer: `/body/banks/${index}`, message: 'not in this API key\'s banks=' }] } })
}

/**
 * The banks named in `banks`, checked in order: each within the API key's banks= (403, whether or
 * not it exists), on this server (404), and of `type` when the type is known (422).
 */
function namedBanks(names: readonly string[], context: MatchContext, type: BankType | undefined): Bank[] {
  const set = context.banks
  const allowed = context.allowed
  names.forEach((name, index) => { if (allowed !== null && !allowed.has(name)) throw bankForbidden(context.keyName, name, index) })
  if (set === null) {
    throw problems.unprocessable('no-banks', 'No similarity banks', 'This server has no similarity banks: SIMILARITY_BANKS_DIR is not set',
      { errors: [{ pointer: '/body/banks', message: 'no banks on this server' }] })
  }
  return names.map((name, index) => {
    const bank = set.get(name)
    if (bank === undefined) {
      throw new Problem(404, 'urn:hashd:problem:unknown-bank', 'Unknown bank', `There is no similarity bank named ${name} (GET /api/health lists the banks to a key with the health scope)`,
        { extensions: { bank: name, errors: [{ pointer: `/body/banks/${index}`, message: 'no such bank' }] } })
    }
    if (type !== undefined && bank.type !== type) {
      throw problems.unprocessable('bank-type-mismatch', 'Bank of another type', `The bank ${name} holds ${bank.type} hashes, and the hash is ${type}`,
        { bank: name, errors: [{ pointer: `/body/banks/${index}`, message: `a ${bank.type} bank` }] })
    }
    return bank
  })
}

/**
 * The checks of a batch's fields at the top, before any item runs (routes/batch.ts): the algorithm,
 * and the banks it names (with the algorithm's type when the top gives one). A mistake there would
 * be every item's, so it is the whole batch's 4xx.
 */
export function checkMatchTop(top: MatchRequest, context: MatchContext): void {
  const type = top.algorithm === undefined ? undefined : matchType(top.algorithm)
  if (top.banks !== undefined) namedBanks(top.banks, context, type)
}

/** The banks a request searches, checked: names the key may search and the server has, of the hash's type. */
function banksFor(type: BankType, request: MatchRequest, context: MatchContext): Bank[] {
  if (request.banks !== undefined) return namedBanks(request.banks, context, type)
  const set = context.banks
  const allowed = context.allowed
  if (set === null) throw problems.unprocessable('no-banks', 'No similarity banks', 'This server has no similarity banks: SIMILARITY_BANKS_DIR is not set')
  const banks = set.ofType(type).filter((bank) => allowed === null || allowed.has(bank.name))
  if (banks.length === 0) {
    throw problems.unprocessable('no-banks', 'No similarity banks', allowed === null
      ? `SIMILARITY_BANKS_DIR holds no ${type} bank`
      : `SIMILARITY_BANKS_DIR holds no ${type} bank that this API key may search (its banks=)`)
  }
  return banks
}

/**
 * Merged order: distance ascending or score descending, then bank; within a bank, the bank's own
 * order (its file's: hash bytes, then id), which the sort keeps (Array#sort is stable).
 */
function compareEntries(a: MatchEntry, b: MatchEntry): number {
  if (a.score !== undefined && b.score !== undefined && a.score !== b.score) return b.score - a.score
  if (a.distance !== undefined && b.distance !== undefined && a.distance !== b.distance) return a.distance - b.distance
  return a.bank < b.bank ? -1 : a.bank > b.bank ? 1 : 0
}

/** A checked match request: what to search, and how to answer. */
interface MatchPlan {
  type: BankType
  hashes: string[]
  names: string[]
  threshold: number
  field: 'maxDistance' | 'minScore'
  limit: number
  banks: Bank[]
  options: BankSearchOptions
}

function planMatch(request: MatchRequest, context: MatchContext): MatchPlan {
  const type = matchType(request.algorithm)
  const { hashes, names } = queriesOf(type, request)
  const { threshold, field } = thresholdOf(type, request)
  if (request.lengthTerm !== undefined && type !== 'tlsh') throw fieldError('lengthTerm', `lengthTerm applies to TLSH only, not ${type}`, 'not for this algorithm')
  const limit = request.limit ?? MATCH_DEFAULT_LIMIT
  if (!Number.isInteger(limit) || limit < 1 || limit > MATCH_MAX_LIMIT) throw fieldError('limit', `limit is an integer from 1 to ${MATCH_MAX_LIMIT}`, `not an integer from 1 to ${MATCH_MAX_LIMIT}`)
  const banks = banksFor(type, request, context)
  const options = { threshold, limit, ...(type === 'tlsh' ? { lengthTerm: request.lengthTerm ?? true } : {}) }
  return { type, hashes, names, threshold, field, limit, banks, options }
}

const queryOf = (plan: MatchPlan): string | string[] => plan.hashes.length === 1 ? plan.hashes[0]! : plan.hashes

/** The answer: each bank's matches (`found`, in the order of plan.banks) merged and cut to the limit. */
function answerOf(plan: MatchPlan, found: readonly BankSearchResult[]): MatchResult {
  const { type, hashes, names, banks, limit } = plan
  let truncated = false
  const matches: MatchEntry[] = []
  for (const result of found) truncated ||= result.truncated
  banks.forEach((bank, at) => {
    for (const match of found[at]!.matches) {
      matches.push({
        bank: bank.name, id: match.id, label: match.label,
        ...(type === 'ssdeep' ? { score: match.score ?? 0 } : { distance: match.distance ?? 0 }),
        ...(hashes.length > 1 ? { variant: names[match.variant ?? 0] ?? 'original' } : {}),
      })
    }
  })
  if (banks.length > 1) matches.sort(compareEntries)
  if (matches.length > limit) { matches.length = limit; truncated = true }
  return { algorithm: type, banks: banks.map((bank) => bank.name), [plan.field]: plan.threshold, matches, truncated }
}

export function matchHash(request: MatchRequest, context: MatchContext): MatchResult {
  const plan = planMatch(request, context)
  return answerOf(plan, plan.banks.map((bank) => bank.search(queryOf(plan), plan.options)))
}

/**
 * The hashes one gathered run searches at most, then the event loop turns: on a 10 M-hash PDQ bank
 * a run of 512 takes about 0.4 s of CPU on the loaded test machine (`npm run bench:banks`: 1,208
 * to 1,326 batched lookups per CPU second at 10 M, a third to a half more than one by one); shorter
 * runs gain less, longer ones hold the loop longer.
 */
const GATHERED_RUN_HASHES = 512

/**
 * The searches of one batch request (`items`), gathered while the batch runner starts its items and
 * run together, bank by bank (Bank.searchMany): a large PDQ bank answers a batch with a third to
 * a half more lookups per CPU second than one by one. Items of the other types are searched as they are read. Each item's checks still run when the item is read, so a bad
 * item is its own problem as before; its answer is the same as matchHash's. The runs are cut at
 * GATHERED_RUN_HASHES hashes, each in a turn of the event loop of its own, so one batch of 1,000
 * lookups does not hold the loop for its whole length. A bank the folder replaces in between is
 * searched in its new version, and one it removes answers as a request that came after (404).
 */
export class MatchGatherer {
  /** The banks in force now (the folder's), for a bank replaced while its searches waited. */
  readonly #current: () => BankSet | null

  constructor(current: () => BankSet | null) {
    this.#current = current
  }

  readonly #pending = new Map<Bank, Map<string, { options: BankSearchOptions, searches: { query: string | string[], resolve(result: BankSearchResult): void, reject(error: unknown): void }[] }>>()
  #scheduled = false

  /** The item's answer: gathered for PDQ (whose index gains by it), searched at once for the other types. */
  match(request: MatchRequest, context: MatchContext): MatchResult | Promise<MatchResult> {
    const plan = planMatch(request, context)
    if (plan.type !== 'pdq') return answerOf(plan, plan.banks.map((bank) => bank.search(queryOf(plan), plan.options)))
    return Promise.all(plan.banks.map((bank) => this.#search(bank, queryOf(plan), plan.options))).then((found) => answerOf(plan, found))
  }

  #search(bank: Bank, query: string | string[], options: BankSearchOptions): Promise<BankSearchResult> {
    return new Promise((resolve, reject) => {
      const key = `${options.threshold}/${options.limit}/${options.lengthTerm ?? ''}`
      let byOptions = this.#pending.get(bank)
      if (byOptions === undefined) this.#pending.set(bank, byOptions = new Map())
      let group = byOptions.get(key)
      if (group === undefined) byOptions.set(key, group = { options, searches: [] })
      group.searches.push({ query, resolve, reject })
      if (!this.#scheduled) {
        this.#scheduled = true
        queueMicrotask(() => { this.#run() })
      }
    })
  }

  /** Runs what is pending, GATHERED_RUN_HASHES hashes at a time, a turn of the event loop between runs. */
  #run(): void {
    let budget = GATHERED_RUN_HASHES
    for (const [bank, byOptions] of this.#pending) {
      for (const [key, group] of byOptions) {
        const taken: typeof group.searches = []
        while (group.searches.length > 0 && budget > 0) {
          const search = group.searches.shift()!
          budget -= typeof search.query === 'string' ? 1 : search.query.length
          taken.push(search)
        }
        if (group.searches.length === 0) byOptions.delete(key)
        if (taken.length > 0) {
          try {
            const live = bank.closed ? this.#current()?.get(bank.name) : bank
            if (live === undefined || live.type !== bank.type) {
              throw new Problem(404, 'urn:hashd:problem:unknown-bank', 'Unknown bank', `The similarity bank ${bank.name} was removed while the batch ran`,
                { extensions: { bank: bank.name, errors: [{ pointer: '/body/banks', message: 'no such bank' }] } })
            }
            const results = live.searchMany(taken.map((search) => search.query), group.options)
            taken.forEach((search, at) => search.resolve(results[at]!))
          } catch (error) {
            for (const search of taken) search.reject(error)
          }
        }
        if (budget <= 0) break
      }
      if (byOptions.size === 0) this.#pending.delete(bank)
      if (budget <= 0) break
    }
    if (this.#pending.size > 0) setImmediate(() => { this.#run() })
    else this.#scheduled = false
  }
}

/** The similarity hashes an upload can be matched by, in the order answered. */
export const UPLOAD_MATCH_ALGORITHMS = ['ssdeep', 'tlsh', 'pdq'] as const
export type UploadMatchAlgorithm = typeof UPLOAD_MATCH_ALGORITHMS[number]

export interface UploadMatchOptions {
  algorithms: readonly UploadMatchAlgorithm[]
  banks?: string[]
  pdqMaxDistance?: number
  tlshMaxDistance?: number
  ssdeepMinScore?: number
  limit?: number
  lengthTerm?: boolean
}

/**
 * The checks of an upload's match that need no hash, made before a byte of the upload is read: the
 * banks named (403 outside the key's banks=, 404 unknown, 422 of a type no algorithm hashes), and
 * that some bank will be searched (422 no-banks). `pointer` is where `banks` is (the query string).
 */
export function checkUploadMatch(options: UploadMatchOptions, context: MatchContext, pointer: string): void {
  const set = context.banks
  if (set === null) throw problems.unprocessable('no-banks', 'No similarity banks', 'This server has no similarity banks: SIMILARITY_BANKS_DIR is not set')
  const allowed = context.allowed
  if (options.banks !== undefined) {
    options.banks.forEach((name, index) => {
      if (allowed !== null && !allowed.has(name)) {
        const refusal = bankForbidden(context.keyName, name, index)
        throw new Problem(403, refusal.type, refusal.title, refusal.detail, { extensions: { scope: 'banks', errors: [{ pointer, message: `${name} is not in this API key's banks=` }] } })
      }
      const bank = set.get(name)
      if (bank === undefined) {
        throw new Problem(404, 'urn:hashd:problem:unknown-bank', 'Unknown bank', `There is no similarity bank named ${name}`, { extensions: { bank: name, errors: [{ pointer, message: `no bank ${name}` }] } })
      }
      if (!(options.algorithms as readonly string[]).includes(bank.type)) {
        throw problems.unprocessable('bank-type-mismatch', 'Bank of another type', `The bank ${name} holds ${bank.type} hashes, and the upload is hashed with ${options.algorithms.join(', ')}`,
          { bank: name, errors: [{ pointer, message: `a ${bank.type} bank` }] })
      }
    })
    return
  }
  const searchable = options.algorithms.some((type) => set.ofType(type).some((bank) => allowed === null || allowed.has(bank.name)))
  if (!searchable) {
    throw problems.unprocessable('no-banks', 'No similarity banks', `SIMILARITY_BANKS_DIR holds no ${options.algorithms.join(', ')} bank${allowed === null ? '' : ' that this API key may search (its banks=)'}`)
  }
}

/**
 * An upload's matches, one answer per algorithm hashed: the banks of its type (those named, or
 * every one the key may search), or none (`banks` empty) when there is no such bank.
 */
export function matchUpload(hashes: Partial<Record<UploadMatchAlgorithm, string>>, dihedral: MatchRequest['dihedral'], options: UploadMatchOptions, context: MatchContext): Partial<Record<UploadMatchAlgorithm, MatchResult>> {
  const answers: Partial<Record<UploadMatchAlgorithm, MatchResult>> = {}
  for (const type of options.algorithms) {
    const hash = hashes[type]
    if (hash === undefined) continue
    const named = options.banks?.filter((name) => context.banks?.get(name)?.type === type)
    const ofType = context.banks?.ofType(type).filter((bank) => context.allowed === null || context.allowed.has(bank.name)) ?? []
    const threshold = type === 'ssdeep' ? { minScore: options.ssdeepMinScore } : { maxDistance: type === 'pdq' ? options.pdqMaxDistance : options.tlshMaxDistance }
    if (named?.length === 0 || (named === undefined && ofType.length === 0)) {
      const comparer = comparers.find((each) => each.name === type)!
      answers[type] = {
        algorithm: type, banks: [], matches: [], truncated: false,
        ...(type === 'ssdeep' ? { minScore: options.ssdeepMinScore ?? comparer.defaultThreshold } : { maxDistance: threshold.maxDistance ?? comparer.defaultThreshold }),
      }
      continue
    }
    answers[type] = matchHash({
      algorithm: type, hash, ...(named === undefined ? {} : { banks: named }), ...threshold,
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(type === 'tlsh' && options.lengthTerm !== undefined ? { lengthTerm: options.lengthTerm } : {}),
      ...(type === 'pdq' && dihedral !== undefined ? { dihedral } : {}),
    }, context)
  }
  return answers
}

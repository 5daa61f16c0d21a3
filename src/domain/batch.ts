/**
 * The one batch runner (Vault Transit's `batch_input`, in hashd's manner): a batch is a list of
 * items, each run through the same domain function as a single request, giving one result or one
 * problem per item, in order, with the item's `reference` echoed back. A failed item does not fail
 * the batch. Routes declare their item schema (routes/batch.ts) and call this; none has a loop of
 * its own.
 *
 * - Fields given at the top of a batch apply to every item that does not give its own (a batch of
 *   HMACs names `keyName` once); they are written into the items themselves. Fields that choose
 *   one thing together (`key`, `keyName`, `keyVersion`, `keyEncoding`: which key) are a group: an
 *   item that makes its own choice (`key` or `keyName`) takes none of the group from the top, so
 *   its own `key` replaces the batch's `keyName` rather than clashing with it; an item that gives
 *   only `keyVersion` still takes the batch's `keyName`.
 * - A mistake in the fields at the top would be the same for every item, so it is the request's:
 *   the route checks them before any item runs, each alone and with the other fields at the top
 *   (an unknown algorithm or keyName, password work, an input not in its encoding: routes/batch.ts
 *   `checkTop`), and one 4xx answers the whole batch. What is left to an item's own fields, or to
 *   them with the top's, is that item's problem, its pointers moved under the item
 *   (/body/items/<index>/<field>): the other items are answered.
 * - Items whose function answers at once (short inputs: most digests and HMACs) cost no promise;
 *   the others (long inputs on the worker pool) are awaited in turn, or, when the route asks for it
 *   (`inFlight`: HMACs under a key in a PKCS#11 token, which the token makes for several items in
 *   one call), up to that many at once, their entries still handed over in order.
 * - The event loop is never held for long: after every few milliseconds of items the runner lets
 *   other requests in (setImmediate), and it stops when the client has gone away.
 * - Password work is refused (`password-in-batch`, see `refusePasswordWork`): per item, or for the
 *   whole batch when the top asks for it.
 */
import { performance } from 'node:perf_hooks'
import { knownProblem, problems, type ProblemBody } from '../problem.js'

export interface BatchItem { reference?: string }

export type BatchEntry<R> = R | (R & { reference: string }) | { reference?: string, problem: ProblemBody }

/** Fields taken from the top of a batch together: none of `fields` by an item that gives one of `chosenBy`. */
export interface FieldGroup<I> {
  chosenBy: ReadonlyArray<keyof I & string>
  fields: ReadonlyArray<keyof I & string>
}

export interface BatchAnswer<R> {
  results: BatchEntry<R>[]
  processingTimeMs: number
}

/** How long items run before the runner yields to the event loop. */
const SLICE_MS = 4
/** How many items between looks at the clock. */
const CHECK_EVERY = 32

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Runs `run` on every item (merged over `defaults`), in order. A thrown Problem (or a known error)
 * becomes the item's `problem`; anything else is a bug and fails the batch.
 *
 * With `emit`, each entry is handed over as soon as it is made and `results` stays empty: the
 * route writes the answer as it goes, so that a batch's results do not stay alive to its end. (A
 * thousand result objects and their strings kept to the end are what V8's young-generation
 * collections copied again and again: see bench/keys.ts.)
 */
export async function runBatch<I extends object, R extends object>(
  items: readonly (I & BatchItem)[],
  defaults: Partial<I>,
  run: (item: I) => R | Promise<R>,
  options: {
    clientGone?: () => boolean, together?: ReadonlyArray<FieldGroup<I>>, emit?: (entry: BatchEntry<R>, index: number) => void
    /** Items whose result is a promise that may be in flight at once (1 unless given); entries still come out in order. */
    inFlight?: number
  } = {},
): Promise<BatchAnswer<R>> {
  const started = performance.now()
  // The batch's own fields go into each item that lacks them, in place: the items are this
  // request's parsed body, and a copy per item (object spread) cost more than an HMAC.
  const shared = Object.keys(defaults) as Array<keyof I & string>
  // The groups with a field at the top: only those can make an item skip a field.
  const groups = (options.together ?? []).filter((group) => group.fields.some((field) => defaults[field] !== undefined))
  const emit = options.emit
  const results: BatchEntry<R>[] = emit ? [] : new Array(items.length)
  const settle = (entry: BatchEntry<R>, index: number): void => {
    if (emit) emit(entry, index)
    else results[index] = entry
  }
  const asEntry = (value: R, reference: string | undefined): BatchEntry<R> => reference === undefined ? value : { reference, ...value }
  const asProblem = (error: unknown, index: number, reference: string | undefined): BatchEntry<R> => {
    const problem = knownProblem(error)
    if (!problem) throw error
    const body = problem.toBody()
    if (body.errors) body.errors = body.errors.map((issue) => ({ ...issue, pointer: issue.pointer.replace(/^\/body(?=\/|$)/, `/body/items/${index}`) }))
    return reference === undefined ? { problem: body } : { reference, problem: body }
  }
  // Items in flight (inFlight > 1), oldest first: each settles to its entry or to the error that
  // fails the batch (never a rejection left unhandled while an older one is awaited).
  const inFlight = Math.max(1, options.inFlight ?? 1)
  const flying: { index: number, settled: Promise<{ entry: BatchEntry<R> } | { error: unknown }> }[] = []
  const land = async (): Promise<void> => {
    const oldest = flying.shift()!
    const outcome = await oldest.settled
    if ('error' in outcome) throw outcome.error
    settle(outcome.entry, oldest.index)
  }
  let sliceStart = started
  for (let index = 0; index < items.length; index++) {
    if (index % CHECK_EVERY === CHECK_EVERY - 1 && performance.now() - sliceStart > SLICE_MS) {
      await nextTurn()
      if (options.clientGone?.()) throw problems.clientClosed()
      sliceStart = performance.now()
    }
    const item = items[index]!
    const reference = item.reference
    // Which groups the item chooses for itself, read before any field is filled in (a bit each).
    const own = groups.length === 0 ? 0 : ownChoices(item, groups)
    for (const field of shared) {
      if (item[field] !== undefined || (own !== 0 && inOwnGroup(field, groups, own))) continue
      item[field] = defaults[field]!
    }
    let entry: BatchEntry<R>
    try {
      let value = run(item)
      if (value instanceof Promise) {
        if (inFlight > 1) {
          const settled = value.then((done) => ({ entry: asEntry(done, reference) }), (error: unknown) => {
            try { return { entry: asProblem(error, index, reference) } } catch (bug) { return { error: bug } }
          })
          flying.push({ index, settled })
          if (flying.length >= inFlight) await land()
          continue
        }
        value = await value
      }
      entry = asEntry(value, reference)
    } catch (error) {
      entry = asProblem(error, index, reference)
    }
    // In order: the items still in flight are older.
    while (flying.length > 0) await land()
    settle(entry, index)
  }
  while (flying.length > 0) await land()
  return { results, processingTimeMs: performance.now() - started }
}

/** The groups in which `item` makes its own choice, as bits (group i: 1 << i). Loops, no arrays: it runs for every item. */
function ownChoices<I extends object>(item: I, groups: ReadonlyArray<FieldGroup<I>>): number {
  let own = 0
  for (let index = 0; index < groups.length; index++) {
    for (const chooser of groups[index]!.chosenBy) {
      if (item[chooser] !== undefined) { own |= 1 << index; break }
    }
  }
  return own
}

/** Whether `field` belongs to one of the groups `own` marks (so the item takes it not from the top). */
function inOwnGroup<I extends object>(field: keyof I & string, groups: ReadonlyArray<FieldGroup<I>>, own: number): boolean {
  for (let index = 0; index < groups.length; index++) {
    if ((own & (1 << index)) !== 0 && groups[index]!.fields.includes(field)) return true
  }
  return false
}

/**
 * Password work is refused in a batch (item by item, or whole when the top asks for it): each hash or verification takes tens of
 * milliseconds and up to MAX_ARGON2_MEMORY_KIB of a worker thread, so one request of 10,000 would
 * hold the pool for minutes while the rate limit saw one request; and a login checks one password
 * at a time anyway. Digests (and HMACs) cost microseconds, which is what batches are for.
 */
export function refusePasswordWork(what: string, pointer: string): never {
  throw problems.unprocessable('password-in-batch', 'Password hashes are not batched',
    `${what} is password work, which is one per request (each hash or verification takes a worker thread for tens of milliseconds); batches take digests and HMACs`,
    { errors: [{ pointer, message: 'password work is not batched' }] })
}

/** `refusePasswordWork` for a password scheme, named by the request or read from its hash. */
export function refusePasswordScheme(scheme: { name: string }, pointer: string): never {
  return refusePasswordWork(`${scheme.name}, a password scheme,`, pointer)
}

/**
 * glibc malloc settings for a long-running server with threads, set once at start through
 * mallopt(3) (reached with koffi, as libxcrypt is), and memory handed back to the kernel when the
 * server goes quiet (malloc_trim(3)). V8 keeps its JS heap in its own pages, but everything else a
 * Node process allocates goes through malloc: socket read buffers (64 KiB each), Buffers, the
 * upload rings, the native hashers' memory (argon2's blocks, scrypt's V).
 *
 * What glibc does by default, and what each setting changes (measured with `npm run soak` and
 * `npm run bench:upload-cpu`; docs/benchmarks.md has the figures):
 * - M_MMAP_THRESHOLD, fixed at glibc's starting value of 128 KiB. By default glibc raises this
 *   threshold to the size of any mmapped block that is freed (up to 32 MiB), and the trim
 *   threshold to twice that. After the first freed argon2 block (19 MiB at OWASP's parameters) or
 *   upload ring, such blocks come from the heaps instead, where they fragment them and keep their
 *   pages. Fixed, large blocks are always mapped and unmapped on their own.
 * - M_TRIM_THRESHOLD, 128 MiB instead of 128 KiB: socket read buffers are freed in batches, when a
 *   collection (which V8 starts once tens of MiB of such external memory have piled up) sweeps
 *   their handles; glibc gave the top of the heap back to the kernel after each batch (a brk(2)
 *   call, 400–700 of them per 256 MiB upload under strace), and the next batch faulted it in
 *   again: 20,000–45,000 minor faults per 256 MiB upload, and a fifth to a third of the main
 *   thread's CPU. At 16–32 MiB some runs still had as many (a batch can exceed the threshold);
 *   at 128 MiB none had more than a few hundred (`npm run bench:upload-cpu`). It does not raise
 *   the soak's peak (203 MB against 204 MB at 32 MiB): what the threshold keeps while busy, the
 *   quiet-time trim below gives back.
 * - M_ARENA_MAX, 2 instead of 8 per core: each thread that allocates (main, libuv's pool, V8's
 *   helpers, the piscina and upload threads) gets an arena of its own, and memory freed in one
 *   cannot serve another, nor is an ended thread's arena ever unmapped.
 * - malloc_trim(0) once the process has been quiet for a while after being busy: the free memory
 *   inside the heaps (which the trim threshold only bounds at the top) goes back to the kernel.
 *
 * And one thing that is not glibc's, done at the same quiet moment just before the trim: a
 * memory-reducing collection of the main thread's JS heap (V8's "last resort" one: full, compacting,
 * and giving emptied pages back), when Node runs with --expose-gc, as `npm start` and the image do.
 * V8 collects when allocation makes it, so a heap grown under load stays grown once the load stops
 * (Node 24: 40 MB of JS heap a minute after the soak, against 30 at rest), and start-up leaves
 * pages half full. With it, Node 24's soak was at 115 MB a minute after its load rather than 150,
 * and Node 20's at 103 rather than 119 (docs/benchmarks.md). It runs once per busy spell, when the
 * process is quiet, so the pause (tens of ms) falls where no request waits for it. The freed
 * ArrayBuffers' memory is malloc's, which the trim then hands back.
 *
 * A setting glibc already reads from the environment (MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_,
 * MALLOC_MMAP_THRESHOLD_) is left as the operator set it; MEMORY_TUNING=off sets and reclaims
 * nothing. Other C libraries (musl on Alpine) lack mallopt's parameters and are left alone (the
 * quiet-time collection still runs there).
 */
import { createRequire } from 'node:module'
import { setFlagsFromString } from 'node:v8'

/** <malloc.h> parameter numbers. */
const M_TRIM_THRESHOLD = -1
const M_MMAP_THRESHOLD = -3
const M_ARENA_MAX = -8

const KiB = 1024
const MiB = 1024 * KiB

/** Each setting, the environment variable by which glibc lets an operator set it instead, and its value here. */
const SETTINGS: Array<{ param: number, name: string, env: string, value: number }> = [
  { param: M_MMAP_THRESHOLD, name: 'M_MMAP_THRESHOLD', env: 'MALLOC_MMAP_THRESHOLD_', value: 128 * KiB },
  { param: M_TRIM_THRESHOLD, name: 'M_TRIM_THRESHOLD', env: 'MALLOC_TRIM_THRESHOLD_', value: 128 * MiB },
  { param: M_ARENA_MAX, name: 'M_ARENA_MAX', env: 'MALLOC_ARENA_MAX', value: 2 },
]

/**
 * The same settings as the environment variables glibc reads at start: for a process that should
 * run with hashd's allocator settings without hashd's code (`npm run bench:multipart-floor`'s bare
 * peer, so that its ratios are not the allocator's).
 */
export const glibcEnvironment = (): Record<string, string> =>
  Object.fromEntries(SETTINGS.map((setting) => [setting.env, String(setting.value)]))

/** How often the process's CPU use is looked at, and what counts as quiet: under 2 % of one core. */
const QUIET_CHECK_MS = 10_000
const QUIET_CPU_FRACTION = 0.02
/** How long after a reclaim its RSS is read for the log: V8 gives emptied pages back off the main thread. */
const RSS_SETTLE_MS = 1000

export interface MemoryTuning {
  /** The settings made, e.g. `M_TRIM_THRESHOLD=134217728`; empty where none was (not glibc, or all set by the environment). */
  applied: string[]
  /** Why nothing was set, when nothing was. */
  skipped?: string
  /** What runs when the process goes quiet after being busy: `v8-collection` and `malloc_trim`, those available. */
  whenQuiet: string[]
  /** Stops the quiet-time reclaiming (for tests and shutdown; the timer never holds the process open). */
  stop: () => void
  /** Called after each quiet-time reclaim, once set (the server logs it at debug). */
  onReclaim?: (reclaimed: Reclaimed) => void
}

/** One quiet-time reclaim (for the debug log): RSS before it and a second after it, the heap before and after. */
export interface Reclaimed {
  rssBefore: number
  rssAfter: number
  heapBefore: number
  heapAfter: number
  ms: number
}

interface Libc {
  mallopt: (param: number, value: number) => number
  mallocTrim: (pad: number) => number
}

function loadGlibc(): Libc | string {
  if (process.platform !== 'linux') return 'not Linux'
  let koffi: typeof import('koffi')
  try {
    koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi')
  } catch {
    return 'koffi could not be loaded'
  }
  try {
    const lib = koffi.load('libc.so.6')
    // glibc's own entry point: absent from musl and other C libraries, whose malloc differs.
    lib.func('const char *gnu_get_libc_version(void)')
    return { mallopt: lib.func('int mallopt(int param, int value)'), mallocTrim: lib.func('int malloc_trim(size_t pad)') }
  } catch {
    return 'the C library is not glibc'
  }
}

/**
 * Whether V8's gc function takes an options object. Node 20's V8 (11.3) reads any object as "a
 * minor collection": with 22 MB of dropped objects in the old generation, `gc({ type: 'major' })`
 * left the heap at 25 MB and took 0.3 ms, where `gc()` took it to 3 MB (`node --expose-gc`, the
 * objects made and promoted by two `gc()` calls first). V8 12 and later (Node 22 on) read the
 * options. Older V8 gets a full collection with compaction forced for its length
 * (compactingFullCollection): without it, V8's heuristics left Node 20's old space at 32.0 MB
 * committed for 25.8 MB used after the pwned bench's checks, and with it at 26.5 for 25.8.
 */
const GC_OPTIONS_UNDERSTOOD = Number(process.versions.v8.split('.')[0]) >= 12

/**
 * Node 20's stand-in for the last-resort collection, which V8 11 cannot be asked for: a full
 * collection that compacts (the pages it empties go back to the OS) and flushes the bytecode of
 * every function not on the stack (start-up code, run once, is compiled again from its source if
 * it ever runs again), as the last-resort one does. V8 reads these flags when a full collection
 * chooses its evacuation candidates and its code-flushing mode, so setting them around one call
 * affects that call only.
 */
const LAST_RESORT_FLAGS = ['compact-on-every-full-gc', 'stress-flush-code', 'flush-baseline-code']

function compactingFullCollection(collect: NodeJS.GCFunction): void {
  for (const flag of LAST_RESORT_FLAGS) setFlagsFromString(`--${flag}`)
  try {
    collect()
  } finally {
    for (const flag of LAST_RESORT_FLAGS) setFlagsFromString(`--no-${flag}`)
  }
}

/**
 * Applies the settings above (unless `enabled` is false) and starts the quiet-time reclaiming.
 * `collect` is V8's gc function, which Node defines only under --expose-gc.
 */
export function tuneMemory(enabled: boolean, options: { env?: NodeJS.ProcessEnv, collect?: NodeJS.GCFunction } = {}): MemoryTuning {
  const { env = process.env, collect = globalThis.gc } = options
  const none = (skipped: string): MemoryTuning => ({ applied: [], skipped, whenQuiet: [], stop: () => {} })
  if (!enabled) return none('MEMORY_TUNING=off')
  const libc = loadGlibc()
  const applied: string[] = []
  if (typeof libc !== 'string') {
    for (const setting of SETTINGS) {
      if (env[setting.env] !== undefined) continue
      // mallopt returns 1 on success, 0 on error.
      if (libc.mallopt(setting.param, setting.value) === 1) applied.push(`${setting.name}=${setting.value}`)
    }
  }
  const whenQuiet = [...(collect ? ['v8-collection'] : []), ...(typeof libc !== 'string' ? ['malloc_trim'] : [])]
  const skipped = typeof libc === 'string' ? libc : undefined
  const tuning: MemoryTuning = { applied, ...(skipped ? { skipped } : {}), whenQuiet, stop: () => {} }
  if (whenQuiet.length === 0) return tuning

  const reclaim = () => {
    const started = performance.now()
    const rssBefore = process.memoryUsage.rss()
    const heapBefore = process.memoryUsage().heapTotal
    if (collect) {
      if (GC_OPTIONS_UNDERSTOOD) collect({ type: 'major', execution: 'sync', flavor: 'last-resort' })
      else compactingFullCollection(collect)
    }
    if (typeof libc !== 'string') libc.mallocTrim(0)
    const ms = Math.round(performance.now() - started)
    const heapAfter = process.memoryUsage().heapTotal
    // A compacting collection first copies the live objects of the pages it empties, then V8's
    // unmapper hands those pages back on a background thread: RSS right after the call is higher
    // than before it (by up to 20 MB after the pwned bench's checks), and settled a moment later.
    setTimeout(() => tuning.onReclaim?.({ rssBefore, rssAfter: process.memoryUsage.rss(), heapBefore, heapAfter, ms }), RSS_SETTLE_MS).unref()
  }
  let last = process.cpuUsage()
  let busySinceReclaim = false
  const timer = setInterval(() => {
    const used = process.cpuUsage(last)
    last = process.cpuUsage()
    const fraction = (used.user + used.system) / 1000 / QUIET_CHECK_MS
    if (fraction >= QUIET_CPU_FRACTION) {
      busySinceReclaim = true
    } else if (busySinceReclaim) {
      busySinceReclaim = false
      reclaim()
    }
  }, QUIET_CHECK_MS)
  timer.unref()
  tuning.stop = () => clearInterval(timer)
  return tuning
}

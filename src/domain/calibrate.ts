/**
 * POST /api/calibrate: cost parameters whose hashing time on this server is near a target, found by
 * measuring in the worker pool (the same threads, the same memory admission as real hashing).
 *
 * Each family has one knob that time grows with (bcrypt's cost, PBKDF2's iterations, argon2id's
 * passes at a chosen memory, scrypt's N, yescrypt's libxcrypt cost). A cheap probe, run twice,
 * measures the time per unit of the knob; the knob for the target follows (doubling schemes by
 * log2, linear ones in proportion), clamped to at least the OWASP Password Storage Cheat Sheet minimum and at most the
 * server's caps, then measured once more (and refined once when far off). The answer never goes
 * below the minimum: when the target is too low for it, the minimum is returned with a warning.
 *
 * Calibration is expensive, so it has a server-wide rate limit and runs one at a time
 * (CalibrationGate), and its whole run is bounded by CALIBRATE_TIMEOUT_MS.
 */
import { randomBytes } from 'node:crypto'
import { passwordSchemeNamed } from '../algorithms/registry.js'
import { yescryptCostParams } from '../algorithms/password/crypt.js'
import { scryptMemoryBytes } from '../algorithms/password/scrypt.js'
import type { CostParams } from '../algorithms/types.js'
import type { Config } from '../config.js'
import { Problem, problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import type { Engine } from './engine.js'

export interface CalibrateRequest {
  algorithm: string
  targetMs: number
  maxMemoryKiB?: number
}

export interface CalibrateResult {
  algorithm: string
  /** Options for /api/hash (and PASSWORD_OPTIONS) with every value filled in. */
  options: CostParams
  targetMs: number
  /** The time hashing with `options` took in the last measurement, in milliseconds. */
  measuredMs: number
  /** Every measurement made, in order. */
  measurements: Array<{ options: CostParams, ms: number }>
  warnings: string[]
}

/** RFC 9106 §4's second recommended Argon2id option uses 64 MiB: the memory used when none is given. */
export const DEFAULT_ARGON2_MEMORY_KIB = 65_536

/**
 * The least memory each memory-hard scheme's minimum needs, in KiB: argon2id m=7168 (OWASP, with
 * t=5), scrypt N=2^17, r=8 (128·N·r bytes, OWASP), yescrypt cost 5 (libxcrypt's default, 16 MiB).
 * Less is 422 below-minimum; the API document states them as maxMemoryKiB's floors.
 */
export const MINIMUM_MEMORY_KIB = { argon2id: 7168, scrypt: 131_072, yescrypt: 16_384 } as const

/** How one family is tuned: the probe, and the options for a knob value estimated from it. */
interface Calibrator {
  /** The options of the cheap first measurement. */
  probe: CostParams
  /** Options estimated to take `targetMs`, from a measurement of `measured` that took `ms`. */
  estimate(measured: CostParams, ms: number, targetMs: number): CostParams
  /** Whether these options are the OWASP minimum (so a slower-than-target time cannot be helped). */
  atFloor(options: CostParams): boolean
  /** Whether these options are the most the caps (or maxMemoryKiB) allow. */
  atCeiling(options: CostParams): boolean
  /** Said when the target is below what the minimum takes. */
  floorNote: string
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value))

/** bcrypt and bcrypt-sha256: each cost step doubles the work (2^cost rounds). */
function bcryptCalibrator(name: string, capCost: number): Calibrator {
  const floor = 10
  return {
    probe: { cost: 8 },
    estimate: ({ cost = 8 }, ms, target) => ({ cost: clamp(Math.round(cost + Math.log2(target / Math.max(ms, 0.01))), floor, capCost) }),
    atFloor: ({ cost = 0 }) => cost <= floor,
    atCeiling: ({ cost = 0 }) => cost >= capCost,
    floorNote: `${name} cost ${floor} (OWASP's minimum work factor)`,
  }
}

/** PBKDF2: time is linear in the iteration count; OWASP's minimum is the scheme's default. */
function pbkdf2Calibrator(name: string, floor: number, cap: number): Calibrator {
  if (cap < floor) throw problems.costAboveCap(`${name} needs at least ${floor} iterations (OWASP) and this server's MAX_PBKDF2_ITERATIONS is ${cap}`)
  return {
    probe: { iterations: 20_000 },
    estimate: ({ iterations = 20_000 }, ms, target) => ({ iterations: clamp(Math.round(iterations * target / Math.max(ms, 0.01) / 1000) * 1000, floor, cap) }),
    atFloor: ({ iterations = 0 }) => iterations <= floor,
    atCeiling: ({ iterations = 0 }) => iterations >= cap,
    floorNote: `${name} with ${floor} iterations (OWASP's minimum)`,
  }
}

/**
 * argon2id: memory as large as allowed (more memory costs an attacker more than more passes), then
 * passes t for the time. OWASP's minimum is m·t ≥ 19456 KiB·2 with m ≥ 7168 KiB (its list of
 * equivalent settings runs from m=47104,t=1 to m=7168,t=5); when even that is slower than the
 * target at the chosen memory, OWASP's m=19456, t=2 is the answer.
 */
function argon2Calibrator(memoryKiB: number, capTime: number): Calibrator {
  const minimumProduct = 19_456 * 2
  if (memoryKiB < MINIMUM_MEMORY_KIB.argon2id) {
    throw problems.unprocessable('below-minimum', 'Memory below the OWASP minimum', `argon2id needs at least ${MINIMUM_MEMORY_KIB.argon2id} KiB (OWASP, with t=5); maxMemoryKiB allows ${memoryKiB}`)
  }
  const floorTime = (m: number) => Math.ceil(minimumProduct / m)
  return {
    probe: { memoryCost: memoryKiB, timeCost: 1, parallelism: 1 },
    estimate({ memoryCost = memoryKiB, timeCost = 1 }, ms, target) {
      // Time is close to proportional to m·t (RFC 9106 §3.2: t passes over m blocks of 1 KiB).
      const affordable = target / Math.max(ms / (memoryCost * timeCost), 1e-9)
      if (affordable >= memoryKiB) {
        return { memoryCost: memoryKiB, timeCost: clamp(Math.round(affordable / memoryKiB), floorTime(memoryKiB), capTime), parallelism: 1 }
      }
      // Less than one pass over all the memory allowed: one pass over as much as the time buys.
      if (affordable >= minimumProduct) return { memoryCost: Math.floor(affordable / 1024) * 1024, timeCost: 1, parallelism: 1 }
      return { memoryCost: 19_456, timeCost: 2, parallelism: 1 }
    },
    atFloor: ({ memoryCost = 0, timeCost = 0 }) => memoryCost * timeCost <= minimumProduct,
    atCeiling: ({ memoryCost = 0, timeCost = 0 }) => memoryCost >= memoryKiB && timeCost >= capTime,
    floorNote: 'argon2id m=19456 KiB, t=2 (OWASP\'s minimum)',
  }
}

/** scrypt: r=8, p=1 and N a power of two; time and memory both grow with N (128·N·r bytes). */
function scryptCalibrator(memoryBytes: number): Calibrator {
  const floorLog = 17
  const maxLog = Math.floor(Math.log2(memoryBytes / (128 * 8)))
  if (maxLog < floorLog) {
    throw problems.unprocessable('below-minimum', 'Memory below the OWASP minimum',
      `scrypt needs N=2^17, r=8 (128 MiB, OWASP's minimum); the memory allowed (maxMemoryKiB and MAX_SCRYPT_MEMORY_BYTES) is ${Math.floor(memoryBytes / 1024)} KiB`)
  }
  return {
    probe: { N: 2 ** 14, r: 8, p: 1 },
    estimate: ({ N = 2 ** 14 }, ms, target) => ({ N: 2 ** clamp(Math.round(Math.log2(N * target / Math.max(ms, 0.01))), floorLog, maxLog), r: 8, p: 1 }),
    atFloor: ({ N = 0 }) => N <= 2 ** floorLog,
    atCeiling: ({ N = 0 }) => N >= 2 ** maxLog,
    floorNote: 'scrypt N=2^17, r=8, p=1 (OWASP\'s minimum)',
  }
}

/** yescrypt: each libxcrypt cost step doubles N (and from 3 up, r=32): memory 2^(cost+19) bytes. */
function yescryptCalibrator(name: string, memoryBytes: number): Calibrator {
  const floor = 5
  const memoryOf = (cost: number) => { const { N, r } = yescryptCostParams(cost); return scryptMemoryBytes(N, r) }
  let maxCost = floor
  while (maxCost < 11 && memoryOf(maxCost + 1) <= memoryBytes) maxCost++
  if (memoryOf(floor) > memoryBytes) {
    throw problems.unprocessable('below-minimum', 'Memory below the minimum', `${name} cost ${floor} (libxcrypt's default) needs 16 MiB; the memory allowed is ${Math.floor(memoryBytes / 1024)} KiB`)
  }
  return {
    probe: { cost: floor },
    estimate: ({ cost = floor }, ms, target) => ({ cost: clamp(Math.round(cost + Math.log2(target / Math.max(ms, 0.01))), floor, maxCost) }),
    atFloor: ({ cost = 0 }) => cost <= floor,
    atCeiling: ({ cost = 0 }) => cost >= maxCost,
    floorNote: `${name} cost ${floor} (libxcrypt's default, 16 MiB; OWASP gives no figure)`,
  }
}

/** The schemes calibration supports, for the schema enum and the docs. */
export const CALIBRATED = ['argon2id', 'bcrypt', 'bcrypt-sha256', 'scrypt', 'pbkdf2-sha256', 'pbkdf2-sha512', 'yescrypt'] as const

function calibratorFor(name: string, config: Config, maxMemoryKiB: number | undefined): Calibrator {
  const { caps } = config
  const memoryBytes = (capBytes: number) => Math.min(capBytes, config.maxWorkMemoryBytes, maxMemoryKiB === undefined ? Infinity : maxMemoryKiB * 1024)
  switch (name) {
    case 'bcrypt': case 'bcrypt-sha256': return bcryptCalibrator(name, caps.bcryptCost)
    case 'pbkdf2-sha256': case 'pbkdf2-sha512':
      return pbkdf2Calibrator(name, passwordSchemeNamed(name).options.iterations?.default ?? 600_000, caps.pbkdf2Iterations)
    case 'argon2id':
      return argon2Calibrator(Math.floor(memoryBytes(Math.min(caps.argon2MemoryKiB, maxMemoryKiB ?? DEFAULT_ARGON2_MEMORY_KIB) * 1024) / 1024), caps.argon2TimeCost)
    case 'scrypt': return scryptCalibrator(memoryBytes(caps.scryptMemoryBytes))
    case 'yescrypt': return yescryptCalibrator(name, memoryBytes(caps.scryptMemoryBytes))
    default:
      throw problems.wrongOperation(name, '/api/calibrate', `calibration supports ${CALIBRATED.join(', ')}`)
  }
}

/** Within this fraction of the target, a measurement is near enough not to refine. */
const NEAR = 0.25

export async function calibrate(engine: Engine, request: CalibrateRequest, signal?: AbortSignal): Promise<CalibrateResult> {
  const calibrator = calibratorFor(algorithmFor(request.algorithm, 'hash').name, engine.config, request.maxMemoryKiB)
  const scheme = passwordSchemeNamed(algorithmFor(request.algorithm, 'hash').name)
  const deadline = Date.now() + engine.config.calibrateTimeoutMs
  // A password of typical length; its value does not change the time of any of these schemes.
  const input = Buffer.from(randomBytes(12).toString('base64'))
  const measurements: CalibrateResult['measurements'] = []
  const measure = async (options: CostParams): Promise<number> => {
    if (Date.now() > deadline) {
      throw new Problem(503, 'about:blank', 'Service Unavailable',
        `Calibration did not finish within CALIBRATE_TIMEOUT_MS (${engine.config.calibrateTimeoutMs} ms); the server may be busy`, { headers: { 'retry-after': '10' } })
    }
    scheme.checkCaps(options, engine.config.caps)
    const { ms } = await engine.run<string>({ op: 'password-hash', scheme: scheme.name, input, options }, signal)
    measurements.push({ options, ms })
    return ms
  }
  // The probe twice, its least time kept: every estimate after it scales from this one figure, so a
  // single run slowed by another process's burst (or a thread's first use of its memory) would send
  // the whole calibration astray, while a slow run of the others is corrected by the refinement.
  const probeMs = Math.min(await measure(calibrator.probe), await measure(calibrator.probe))
  let options = calibrator.estimate(calibrator.probe, probeMs, request.targetMs)
  let ms = await measure(options)
  if (Math.abs(ms - request.targetMs) > NEAR * request.targetMs) {
    const refined = calibrator.estimate(options, ms, request.targetMs)
    if (JSON.stringify(refined) !== JSON.stringify(options)) {
      const refinedMs = await measure(refined)
      if (Math.abs(refinedMs - request.targetMs) < Math.abs(ms - request.targetMs) || calibrator.atFloor(refined)) {
        options = refined
        ms = refinedMs
      }
    }
  }
  const warnings: string[] = []
  if (calibrator.atFloor(options) && ms > request.targetMs * (1 + NEAR)) {
    warnings.push(`targetMs ${request.targetMs} is below what the minimum takes on this server: ${calibrator.floorNote} took ${ms.toFixed(0)} ms, and calibration never goes lower`)
  } else if (calibrator.atCeiling(options) && ms < request.targetMs * (1 - NEAR)) {
    warnings.push(`the server's caps (or maxMemoryKiB) stop the cost below what targetMs ${request.targetMs} would allow`)
  }
  const full = { ...defaultsOf(scheme.options), ...options }
  return { algorithm: scheme.name, options: full, targetMs: request.targetMs, measuredMs: ms, measurements, warnings }
}

function defaultsOf(specs: Record<string, { default: number }>): CostParams {
  return Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, spec.default]))
}

/**
 * The server-wide limit on calibrations: at most `max` started per window (0: no count), and one
 * at a time, since each saturates a worker thread for seconds. A refusal is 429 with Retry-After.
 */
export class CalibrationGate {
  readonly #max: number
  readonly #windowMs: number
  #windowStart = 0
  #count = 0
  #running = false

  constructor(max: number, windowMs: number) {
    this.#max = max
    this.#windowMs = windowMs
  }

  /** Takes a slot (returns its release) or throws 429. */
  enter(now = Date.now()): () => void {
    if (this.#running) throw tooMany(1, 'Another calibration is running; calibrations run one at a time')
    if (now - this.#windowStart >= this.#windowMs) {
      this.#windowStart = now
      this.#count = 0
    }
    if (this.#max > 0 && this.#count >= this.#max) {
      const retry = Math.max(1, Math.ceil((this.#windowStart + this.#windowMs - now) / 1000))
      throw tooMany(retry, `This server runs at most ${this.#max} calibrations per ${Math.round(this.#windowMs / 1000)} s (CALIBRATE_RATE_LIMIT_MAX); retry in ${retry} s`)
    }
    this.#count++
    this.#running = true
    return () => { this.#running = false }
  }
}

function tooMany(retryAfterSeconds: number, detail: string): Problem {
  return new Problem(429, 'about:blank', 'Too Many Requests', detail, { headers: { 'retry-after': String(retryAfterSeconds) } })
}

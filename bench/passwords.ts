/**
 * The password rows of `npm run bench`: hashes per second on all cores, hashd against a native
 * reference with one process per core, in A B B A order.
 * - bcrypt cost 10: libxcrypt's crypt_blowfish (Debian's libcrypt1), called from /usr/bin/python3
 *   through ctypes, with `crypt_gensalt` making each `$2b$` setting;
 * - argon2id m=19456 t=2 p=1 (OWASP's parameters): the argon2 reference through argon2-cffi
 *   (Debian's python3-argon2).
 * hashd gets twice as many concurrent requests as there are cores (its pool has one thread per
 * core), at LOG_LEVEL=warn with the limiter off. Each side also prints its CPU time per hash (all
 * of hashd's process, HTTP included; the reference's loop), the ratio that a loaded machine moves
 * less. A row whose reference is missing is skipped with the package to install.
 *
 * bcrypt has two native implementations in hashd (algorithms/password/bcrypt.ts): libxcrypt's
 * crypt_blowfish, the default, and @node-rs/bcrypt, which takes the inputs libxcrypt cannot. The
 * row measures both, the second in a copy of the build that sends every input to @node-rs/bcrypt
 * (bench/patched-build.ts), in one run in the order reference, default, other, other, default,
 * reference, so that drift falls on the three alike; the default is whichever is faster.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { patchedBuild, type Patch } from './patched-build.js'
import { cpuSeconds } from './load.js'
import { start, stop, type Started } from './servers.js'

const PYTHON = '/usr/bin/python3'

/**
 * Python run for `seconds` in one process: prints how many hashes it made, the CPU seconds they
 * took and the seconds until the last one ended (it ends after `seconds`: a hash started before).
 */
const REFERENCES = {
  bcrypt: `
import ctypes, sys, time
lib = ctypes.CDLL('libcrypt.so.1')
lib.crypt_gensalt.restype = ctypes.c_char_p
lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
lib.crypt.restype = ctypes.c_char_p
lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
start = time.monotonic()
end = start + float(sys.argv[1])
count = 0
cpu = time.process_time()
while time.monotonic() < end:
    assert lib.crypt(b'correct horse battery staple', lib.crypt_gensalt(b'$2b$', 10, None, 0)).startswith(b'$2b$10$')
    count += 1
print(count, time.process_time() - cpu, time.monotonic() - start)
`,
  argon2: `
import sys, time
from argon2 import PasswordHasher, Type
hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1, type=Type.ID)
start = time.monotonic()
end = start + float(sys.argv[1])
count = 0
cpu = time.process_time()
while time.monotonic() < end:
    hasher.hash('correct horse battery staple')
    count += 1
print(count, time.process_time() - cpu, time.monotonic() - start)
`,
}

const CHECKS = {
  bcrypt: { code: "import ctypes; ctypes.CDLL('libcrypt.so.1').crypt_gensalt", missing: 'libxcrypt is missing (Debian: libcrypt1) or /usr/bin/python3 is (Debian: python3)' },
  argon2: { code: 'import argon2', missing: 'argon2-cffi is missing (Debian: python3-argon2)' },
}

/**
 * Hashes per second, and CPU milliseconds per hash: the cost of a hash itself, which moves less
 * than the rate when other work shares the cores (the machine's load decides the rate).
 */
interface Measured { rate: number, cpuMs: number }

/** The reference, one process per core, all at once. */
async function reference(kind: keyof typeof REFERENCES, seconds: number): Promise<Measured> {
  const runs = await Promise.all(cpus().map(() => new Promise<{ count: number, cpu: number, elapsed: number }>((resolve) => {
    const child = spawn(PYTHON, ['-c', REFERENCES[kind], String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.on('exit', () => {
      const [count = Number.NaN, cpu = Number.NaN, elapsed = Number.NaN] = output.trim().split(' ').map(Number)
      resolve({ count, cpu, elapsed })
    })
  })))
  const count = runs.reduce((sum, run) => sum + run.count, 0)
  return { rate: runs.reduce((sum, run) => sum + run.count / run.elapsed, 0), cpuMs: runs.reduce((sum, run) => sum + run.cpu, 0) * 1000 / count }
}

/**
 * hashd (all of its process's CPU: the HTTP around each hash too), with twice as many requests in
 * flight as cores: a fixed number of requests, about `seconds` long at `expected` hashes a second,
 * each of them answered before the figures are read. (A run cut at a time would drop the hashes
 * still in flight, whose CPU time it has counted: at a few hashes a second, on a loaded machine,
 * several per cent of the run.)
 */
async function hashd(server: Started, body: object, seconds: number, expected: number): Promise<Measured> {
  const amount = Math.max(cpus().length * 4, Math.round(expected * seconds))
  const before = cpuSeconds(server.child.pid)
  const started = performance.now()
  const result = await autocannon({
    url: `${server.url}/api/hash`, method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body), connections: cpus().length * 2, amount,
  })
  const elapsed = (performance.now() - started) / 1000
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors from hashd`)
  return { rate: result.requests.total / elapsed, cpuMs: (cpuSeconds(server.child.pid) - before) * 1000 / result.requests.total }
}

/** A warm-up run of a few hashes; returns the rate it reached, from which the measured runs are sized. */
async function warm(server: Started, body: object): Promise<number> {
  return (await hashd(server, body, 0, 0)).rate
}

const mean = (first: Measured, second: Measured): Measured => ({ rate: (first.rate + second.rate) / 2, cpuMs: (first.cpuMs + second.cpuMs) / 2 })
const figures = (side: Measured) => `${side.rate.toFixed(1).padStart(7)}/s ${side.cpuMs.toFixed(1).padStart(6)} ms CPU/hash`
const ratios = (ours: Measured, theirs: Measured) => `${(ours.rate / theirs.rate).toFixed(2)} by hashes/s, ${(theirs.cpuMs / ours.cpuMs).toFixed(2)} by CPU/hash`

/** bcrypt's libxcrypt path switched off: every input goes to @node-rs/bcrypt, as where libxcrypt is missing. */
const NODE_RS_BCRYPT: Patch[] = [{ file: 'src/algorithms/password/bcrypt.js', find: 'return blowfish && !key.includes(0);', replace: 'return false;' }]

interface Row {
  kind: keyof typeof REFERENCES
  label: string
  peer: string
  goal: string
  body: object
  /** hashd's other implementation of the row, measured in a patched copy of the build. */
  other?: { label: string, patches: Patch[] }
}

const ROWS: Row[] = [
  {
    kind: 'bcrypt', label: 'bcrypt cost 10', peer: 'libxcrypt crypt_blowfish', goal: '≥ 0.95',
    body: { input: 'correct horse battery staple', algorithm: 'bcrypt', options: { cost: 10 } },
    other: { label: 'on @node-rs/bcrypt', patches: NODE_RS_BCRYPT },
  },
  {
    kind: 'argon2', label: 'argon2id m=19456 t=2 p=1', peer: 'argon2-cffi (reference C)', goal: '≥ 1.0',
    body: { input: 'correct horse battery staple', algorithm: 'argon2id', options: { memoryCost: 19456, timeCost: 2, parallelism: 1 } },
  },
]

const QUIET = { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' }

export async function benchPasswords(hashdScript: string, seconds: number): Promise<void> {
  const cores = cpus().length
  console.log(`\n5. password hashes per second on all ${cores} cores, A B B A against a native reference with one process per core`)
  const copies = mkdtempSync(join(tmpdir(), 'hashd-bench-passwords-'))
  const server = await start(hashdScript, QUIET)
  try {
    for (const row of ROWS) {
      if (spawnSync(PYTHON, ['-c', CHECKS[row.kind].code], { stdio: 'ignore' }).status !== 0) {
        console.log(`${row.label}: skipped (${CHECKS[row.kind].missing})`)
        continue
      }
      let other: Started | undefined
      try {
        if (row.other) other = await start(join(patchedBuild(row.kind, row.other.patches, copies), 'src', 'server.js'), QUIET)
        const expected = await warm(server, row.body)
        const otherExpected = other ? await warm(other, row.body) : 0
        const a1 = await reference(row.kind, seconds)
        const b1 = await hashd(server, row.body, seconds, expected)
        const c1 = other ? await hashd(other, row.body, seconds, otherExpected) : undefined
        const c2 = other ? await hashd(other, row.body, seconds, otherExpected) : undefined
        const b2 = await hashd(server, row.body, seconds, expected)
        const a2 = await reference(row.kind, seconds)
        const [ours, theirs] = [mean(b1, b2), mean(a1, a2)]
        console.log(`${row.label.padEnd(28)} hashd ${figures(ours)}   ${row.peer} ${figures(theirs)}   ratio ${ratios(ours, theirs)} (goal ${row.goal})`)
        if (row.other && c1 && c2) {
          const alternative = mean(c1, c2)
          console.log(`${`  ${row.other.label}`.padEnd(28)} hashd ${figures(alternative)}   ratio ${ratios(alternative, theirs)}; ` +
            `hashd as built ÷ this: ${ratios(ours, alternative)} (the default is the faster: ≥ 1.0)`)
        }
      } finally {
        if (other) await stop(other)
      }
    }
  } finally {
    await stop(server)
    rmSync(copies, { recursive: true, force: true })
  }
}

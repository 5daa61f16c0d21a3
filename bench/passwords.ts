/**
 * The password rows of `npm run bench`: hashes per second on all cores, hashd against a native
 * reference with one process per core, in A B B A order.
 * - bcrypt cost 10: libxcrypt's crypt_blowfish (Debian's libcrypt1), called from /usr/bin/python3
 *   through ctypes, with `crypt_gensalt` making each `$2b$` setting;
 * - argon2id m=19456 t=2 p=1 (OWASP's parameters): the argon2 reference through argon2-cffi
 *   (Debian's python3-argon2).
 * hashd gets twice as many concurrent requests as there are cores (its pool has one thread per
 * core), at LOG_LEVEL=warn with the limiter off. A row whose reference is missing is skipped with
 * the package to install.
 */
import { spawn, spawnSync } from 'node:child_process'
import { cpus } from 'node:os'
import autocannon from 'autocannon'
import { start, stop } from './servers.js'

const PYTHON = '/usr/bin/python3'

/** Python run for `seconds` in one process: prints how many hashes it made. */
const REFERENCES = {
  bcrypt: `
import ctypes, sys, time
lib = ctypes.CDLL('libcrypt.so.1')
lib.crypt_gensalt.restype = ctypes.c_char_p
lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
lib.crypt.restype = ctypes.c_char_p
lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
end = time.monotonic() + float(sys.argv[1])
count = 0
while time.monotonic() < end:
    assert lib.crypt(b'correct horse battery staple', lib.crypt_gensalt(b'$2b$', 10, None, 0)).startswith(b'$2b$10$')
    count += 1
print(count)
`,
  argon2: `
import sys, time
from argon2 import PasswordHasher, Type
hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1, type=Type.ID)
end = time.monotonic() + float(sys.argv[1])
count = 0
while time.monotonic() < end:
    hasher.hash('correct horse battery staple')
    count += 1
print(count)
`,
}

const CHECKS = {
  bcrypt: { code: "import ctypes; ctypes.CDLL('libcrypt.so.1').crypt_gensalt", missing: 'libxcrypt is missing (Debian: libcrypt1) or /usr/bin/python3 is (Debian: python3)' },
  argon2: { code: 'import argon2', missing: 'argon2-cffi is missing (Debian: python3-argon2)' },
}

/** Hashes per second of the reference, one process per core, all at once. */
async function reference(kind: keyof typeof REFERENCES, seconds: number): Promise<number> {
  const counts = await Promise.all(cpus().map(() => new Promise<number>((resolve) => {
    const child = spawn(PYTHON, ['-c', REFERENCES[kind], String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.on('exit', () => resolve(Number(output.trim())))
  })))
  return counts.reduce((sum, count) => sum + count, 0) / seconds
}

/** Hashes per second of hashd, with twice as many requests in flight as cores. */
async function hashd(url: string, body: object, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `${url}/api/hash`, method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body), connections: cpus().length * 2, duration: seconds,
  })
  if (result.non2xx > 0) throw new Error(`${result.non2xx} non-2xx answers from hashd`)
  return result.requests.total / seconds
}

export async function benchPasswords(hashdScript: string, seconds: number): Promise<void> {
  const cores = cpus().length
  console.log(`\n5. password hashes per second on all ${cores} cores, A B B A against a native reference with one process per core`)
  const server = await start(hashdScript, { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' })
  try {
    const rows = [
      { kind: 'bcrypt' as const, label: 'bcrypt cost 10', peer: 'libxcrypt crypt_blowfish', goal: '≥ 0.95', body: { input: 'correct horse battery staple', algorithm: 'bcrypt', options: { cost: 10 } } },
      { kind: 'argon2' as const, label: 'argon2id m=19456 t=2 p=1', peer: 'argon2-cffi (reference C)', goal: '≥ 1.0', body: { input: 'correct horse battery staple', algorithm: 'argon2id', options: { memoryCost: 19456, timeCost: 2, parallelism: 1 } } },
    ]
    for (const row of rows) {
      if (spawnSync(PYTHON, ['-c', CHECKS[row.kind].code], { stdio: 'ignore' }).status !== 0) {
        console.log(`${row.label}: skipped (${CHECKS[row.kind].missing})`)
        continue
      }
      await hashd(server.url, row.body, 2)
      const a1 = await reference(row.kind, seconds)
      const b1 = await hashd(server.url, row.body, seconds)
      const b2 = await hashd(server.url, row.body, seconds)
      const a2 = await reference(row.kind, seconds)
      const [ours, theirs] = [(b1 + b2) / 2, (a1 + a2) / 2]
      console.log(`${row.label.padEnd(28)} hashd ${ours.toFixed(1).padStart(7)}/s   ${row.peer} ${theirs.toFixed(1).padStart(7)}/s   ratio ${(ours / theirs).toFixed(2)} (goal ${row.goal})`)
    }
  } finally {
    await stop(server)
  }
}

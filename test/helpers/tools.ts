/** Independent implementations the tests compare against: openssl, rhash, Python's hashlib, … */
import { execFileSync } from 'node:child_process'

/** Debian's Python, which has passlib, argon2-cffi and bcrypt (the first python3 on PATH may not). */
export const SYSTEM_PYTHON = '/usr/bin/python3'

export function run(command: string, args: string[], input?: string | Uint8Array): string {
  return execFileSync(command, args, { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim()
}

/** Runs a Python snippet with Debian's interpreter; `args` arrive as sys.argv[1:]. */
export function python(code: string, args: string[] = [], input?: string | Uint8Array): string {
  return run(SYSTEM_PYTHON, ['-c', code, ...args], input)
}

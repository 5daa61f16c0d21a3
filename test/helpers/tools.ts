/**
 * Independent implementations the tests compare against (openssl, rhash, Python's hashlib, …) and
 * the real programs some tests start (redis-server, chromium, promtool). One rule for all of them:
 *
 * - on a machine without the tool, the test is skipped, and the reason names the Debian package
 *   that provides it (`b3sum not installed (Debian: b3sum)`);
 * - with HASHD_REQUIRE_TOOLS=1 (CI) a missing tool is a failure, never a skip;
 * - HASHD_TEST_TOOLS=none pretends nothing is installed, to exercise the skip path on a full machine.
 *
 * Every check is recorded (in HASHD_TOOL_REPORT_DIR, set by scripts/test.ts), so the run can end
 * with one line naming the tools it used and the ones it skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { accessSync, appendFileSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** Debian's Python, which has passlib, argon2-cffi and bcrypt (the first python3 on PATH may not). */
export const SYSTEM_PYTHON = '/usr/bin/python3'

interface ToolSpec {
  /** The Debian package that provides it; scripts/install-test-tools.sh installs the same list. */
  debian: string
  /** An executable looked up on PATH (or an absolute path). */
  command?: string
  /** A module importable by Debian's Python. */
  pythonModule?: string
  /** A shared library loadable by Debian's Python through ctypes. */
  sharedLibrary?: string
}

export const TOOLS = {
  openssl: { debian: 'openssl', command: 'openssl' },
  curl: { debian: 'curl', command: 'curl' },
  sha256sum: { debian: 'coreutils', command: 'sha256sum' },
  md5sum: { debian: 'coreutils', command: 'md5sum' },
  sha1sum: { debian: 'coreutils', command: 'sha1sum' },
  sha224sum: { debian: 'coreutils', command: 'sha224sum' },
  sha384sum: { debian: 'coreutils', command: 'sha384sum' },
  sha512sum: { debian: 'coreutils', command: 'sha512sum' },
  rhash: { debian: 'rhash', command: 'rhash' },
  b3sum: { debian: 'b3sum', command: 'b3sum' },
  xxhsum: { debian: 'xxhash', command: 'xxhsum' },
  xz: { debian: 'xz-utils', command: 'xz' },
  mkpasswd: { debian: 'whois', command: 'mkpasswd' },
  htpasswd: { debian: 'apache2-utils', command: 'htpasswd' },
  argon2: { debian: 'argon2', command: 'argon2' },
  hashid: { debian: 'hashid', command: 'hashid' },
  python3: { debian: 'python3', command: SYSTEM_PYTHON },
  passlib: { debian: 'python3-passlib', pythonModule: 'passlib.hash' },
  'python3-bcrypt': { debian: 'python3-bcrypt', pythonModule: 'bcrypt' },
  'argon2-cffi': { debian: 'python3-argon2', pythonModule: 'argon2' },
  pycryptodome: { debian: 'python3-pycryptodome', pythonModule: 'Cryptodome.Hash' },
  pynacl: { debian: 'python3-nacl', pythonModule: 'nacl.signing' },
  libxcrypt: { debian: 'libcrypt1', sharedLibrary: 'libcrypt.so.1' },
  'ssh-keygen': { debian: 'openssh-client', command: 'ssh-keygen' },
  'redis-server': { debian: 'redis-server', command: 'redis-server' },
  chromium: { debian: 'chromium', command: '/usr/bin/chromium' },
  promtool: { debian: 'prometheus', command: 'promtool' },
  b2sum: { debian: 'coreutils', command: 'b2sum' },
  minisign: { debian: 'minisign', command: 'minisign' },
  signify: { debian: 'signify-openbsd', command: 'signify-openbsd' },
  gpg: { debian: 'gnupg', command: 'gpg' },
  jq: { debian: 'jq', command: 'jq' },
  pgrep: { debian: 'procps', command: 'pgrep' },
  pidof: { debian: 'sysvinit-utils', command: 'pidof' },
  unshare: { debian: 'util-linux', command: 'unshare' },
  grep: { debian: 'grep', command: 'grep' },
  shellcheck: { debian: 'shellcheck', command: 'shellcheck' },
  slowhttptest: { debian: 'slowhttptest', command: 'slowhttptest' },
  ss: { debian: 'iproute2', command: 'ss' },
  ip: { debian: 'iproute2', command: 'ip' },
  tc: { debian: 'iproute2', command: 'tc' },
  'systemd-analyze': { debian: 'systemd', command: 'systemd-analyze' },
  git: { debian: 'git', command: 'git' },
  rclone: { debian: 'rclone', command: 'rclone' },
  crcmod: { debian: 'python3-crcmod', pythonModule: 'crcmod' },
  libtorrent: { debian: 'python3-libtorrent', pythonModule: 'libtorrent' },
  // the similarity cross-checks, test/similarity-*.test.ts
  ssdeep: { debian: 'ssdeep', command: 'ssdeep' },
  libfuzzy: { debian: 'libfuzzy2', sharedLibrary: 'libfuzzy.so.2' },
  // PKCS#11: a software token, its tools, and Python's binding to compute with the same token objects
  softhsm2: { debian: 'softhsm2', command: 'softhsm2-util' },
  'pkcs11-tool': { debian: 'opensc', command: 'pkcs11-tool' },
  'pkcs11-spy': { debian: 'opensc-pkcs11', sharedLibrary: '/usr/lib/x86_64-linux-gnu/pkcs11-spy.so' },
  pykcs11: { debian: 'python3-pykcs11', pythonModule: 'PyKCS11' },
  // scripts/build-tiger-wasm.sh, to check the committed WebAssembly against its C source
  'clang-16': { debian: 'clang-16', command: 'clang-16' },
  'wasm-ld-16': { debian: 'lld-16', command: 'wasm-ld-16' },
} as const satisfies Record<string, ToolSpec>

export type ToolName = keyof typeof TOOLS

const pretendNone = process.env.HASHD_TEST_TOOLS?.trim().toLowerCase() === 'none'
const requireAll = process.env.HASHD_REQUIRE_TOOLS === '1'
const found = new Map<ToolName, boolean>()

function onPath(command: string): boolean {
  const candidates = command.includes('/') ? [command] : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, command))
  return candidates.some((candidate) => {
    try { accessSync(candidate, constants.X_OK); return true } catch { return false }
  })
}

function pythonCan(statement: string): boolean {
  if (!onPath(SYSTEM_PYTHON)) return false
  return spawnSync(SYSTEM_PYTHON, ['-c', statement], { stdio: 'ignore', timeout: 20_000 }).status === 0
}

function detect(spec: ToolSpec): boolean {
  if (pretendNone) return false
  if ('command' in spec && spec.command) return onPath(spec.command)
  if ('pythonModule' in spec && spec.pythonModule) return pythonCan(`import ${spec.pythonModule}`)
  if ('sharedLibrary' in spec && spec.sharedLibrary) return pythonCan(`import ctypes; ctypes.CDLL(${JSON.stringify(spec.sharedLibrary)})`)
  return false
}

function record(name: ToolName, present: boolean): void {
  const dir = process.env.HASHD_TOOL_REPORT_DIR
  if (dir) appendFileSync(join(dir, `${process.pid}.tsv`), `${name}\t${present ? 'used' : 'missing'}\t${TOOLS[name].debian}\n`)
}

/** Whether a tool is here (memoised; HASHD_TEST_TOOLS=none makes every answer false). */
export function hasTool(name: ToolName): boolean {
  let present = found.get(name)
  if (present === undefined) {
    present = detect(TOOLS[name])
    found.set(name, present)
    record(name, present)
  }
  return present
}

/** `b3sum not installed (Debian: b3sum)`, for each missing tool. */
export function missingReason(names: readonly ToolName[]): string | undefined {
  const missing = names.filter((name) => !hasTool(name))
  if (missing.length === 0) return undefined
  return missing.map((name) => `${name} not installed (Debian: ${TOOLS[name].debian})`).join('; ')
}

/**
 * For node:test's `skip` option: `test('…', { skip: skipUnless('rhash') }, …)`. False when every
 * tool is here; otherwise the reason. With HASHD_REQUIRE_TOOLS=1 a missing tool throws instead, so
 * the test file fails and CI cannot pass while skipping a cross-check.
 */
export function skipUnless(...names: ToolName[]): false | string {
  const reason = missingReason(names)
  if (reason === undefined) return false
  if (requireAll && !pretendNone) throw new Error(`HASHD_REQUIRE_TOOLS=1 and ${reason}`)
  return reason
}

/**
 * The same rule for a reason that is no missing package (not root, so no network namespace): the
 * reason as the skip, or with HASHD_REQUIRE_TOOLS=1 a failure.
 */
export function skipBecause(reason: string): string {
  if (requireAll && !pretendNone) throw new Error(`HASHD_REQUIRE_TOOLS=1 and ${reason}`)
  return reason
}

export function run(command: string, args: string[], input?: string | Uint8Array): string {
  return execFileSync(command, args, { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim()
}

/** Runs a Python snippet with Debian's interpreter; `args` arrive as sys.argv[1:]. */
export function python(code: string, args: string[] = [], input?: string | Uint8Array): string {
  return run(SYSTEM_PYTHON, ['-c', code, ...args], input)
}

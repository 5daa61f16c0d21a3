/**
 * A SoftHSM2 token made for a test: its own SOFTHSM2_CONF and token directory under a temporary
 * directory, initialised with `softhsm2-util --init-token`, with keys put in by independent tools:
 * a secret of a known value through PyKCS11 (pkcs11-tool cannot write a generic secret), a key of
 * unknown value with `pkcs11-tool --keygen`. PyKCS11 also computes with the token's objects, so a
 * test compares hashd's answer with one made by another program on the same key.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { python, run } from './tools.js'

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so'
export const PKCS11_SPY = '/usr/lib/x86_64-linux-gnu/pkcs11-spy.so'
export const TOKEN_LABEL = 'hashd'
export const USER_PIN = '246810'
const SO_PIN = '13579135'

export interface SoftToken {
  dir: string
  /** The token directory SoftHSM2 reads (moving it away makes the token vanish). */
  tokenDir: string
  /** SOFTHSM2_CONF for a process using the token. */
  env: Record<string, string>
  /** A file holding the user PIN. */
  pinFile: string
  /** Another token beside `hashd`, labelled `label`, with the same SO PIN and the user PIN `userPin` (USER_PIN unless given). */
  addToken(label: string, userPin?: string): void
  /** The directory SoftHSM2 keeps the token `label` in (found by its label in token.object). */
  tokenDirOf(label: string): string
  /** A secret key of this value, labelled `label` (CKA_SIGN for generic secrets, CKA_ENCRYPT/DECRYPT for AES), in token `hashd` or `token`. */
  importKey(label: string, value: Buffer, type: 'generic' | 'aes', token?: string): void
  /** `pkcs11-tool --keygen`: a key whose value no one sees. */
  keygen(label: string, keyType: 'GENERIC:32' | 'GENERIC:64' | 'AES:32'): void
  /** `pkcs11-tool --list-objects` of the token, logged in. */
  listObjects(): string
  /** The HMAC PyKCS11 makes with the token object `label` (C_Sign), hex. */
  pyHmac(label: string, mechanism: 'CKM_SHA256_HMAC' | 'CKM_SHA384_HMAC' | 'CKM_SHA512_HMAC', message: Buffer, token?: string): string
  remove(): void
}

const PY_SESSION = String.raw`
import sys, PyKCS11
lib = PyKCS11.PyKCS11Lib(); lib.load(sys.argv[1])
slot = [s for s in lib.getSlotList(tokenPresent=True) if lib.getTokenInfo(s).label.strip() == sys.argv[2]][0]
session = lib.openSession(slot, PyKCS11.CKF_SERIAL_SESSION | PyKCS11.CKF_RW_SESSION)
session.login(sys.argv[3])
`

const PY_IMPORT = PY_SESSION + String.raw`
label, value, kind = sys.argv[4], bytes.fromhex(sys.argv[5]), sys.argv[6]
template = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_SECRET_KEY), (PyKCS11.CKA_TOKEN, True), (PyKCS11.CKA_LABEL, label),
            (PyKCS11.CKA_VALUE, value), (PyKCS11.CKA_SENSITIVE, True), (PyKCS11.CKA_EXTRACTABLE, False)]
if kind == 'generic':
    template += [(PyKCS11.CKA_KEY_TYPE, PyKCS11.CKK_GENERIC_SECRET), (PyKCS11.CKA_SIGN, True), (PyKCS11.CKA_VERIFY, True)]
else:
    template += [(PyKCS11.CKA_KEY_TYPE, PyKCS11.CKK_AES), (PyKCS11.CKA_ENCRYPT, True), (PyKCS11.CKA_DECRYPT, True)]
session.createObject(template)
`

const PY_HMAC = PY_SESSION + String.raw`
key = session.findObjects([(PyKCS11.CKA_CLASS, PyKCS11.CKO_SECRET_KEY), (PyKCS11.CKA_LABEL, sys.argv[4])])[0]
mechanism = PyKCS11.Mechanism(getattr(PyKCS11, sys.argv[5]), None)
print(bytes(session.sign(key, bytes.fromhex(sys.argv[6]), mechanism)).hex())
`

export function makeSoftToken(): SoftToken {
  const dir = mkdtempSync(join(tmpdir(), 'hashd-softhsm-'))
  const tokenDir = join(dir, 'tokens')
  run('mkdir', [tokenDir])
  const conf = join(dir, 'softhsm2.conf')
  writeFileSync(conf, `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = true\n`)
  const env = { SOFTHSM2_CONF: conf }
  const exec = (command: string, args: string[]) => run('env', [`SOFTHSM2_CONF=${conf}`, command, ...args])
  exec('softhsm2-util', ['--init-token', '--free', '--label', TOKEN_LABEL, '--pin', USER_PIN, '--so-pin', SO_PIN])
  const pinFile = join(dir, 'pin')
  writeFileSync(pinFile, `${USER_PIN}\n`, { mode: 0o600 })
  const tool = (args: string[]) => exec('pkcs11-tool', ['--module', SOFTHSM_MODULE, '--token-label', TOKEN_LABEL, '--login', '--pin', USER_PIN, ...args])
  const pins = new Map<string, string>([[TOKEN_LABEL, USER_PIN]])
  const py = (code: string, args: string[], token = TOKEN_LABEL) => {
    const saved = process.env.SOFTHSM2_CONF
    process.env.SOFTHSM2_CONF = conf
    try {
      return python(code, [SOFTHSM_MODULE, token, pins.get(token) ?? USER_PIN, ...args])
    } finally {
      if (saved === undefined) delete process.env.SOFTHSM2_CONF
      else process.env.SOFTHSM2_CONF = saved
    }
  }
  return {
    dir,
    tokenDir,
    env,
    pinFile,
    addToken: (label, userPin = USER_PIN) => {
      exec('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', userPin, '--so-pin', SO_PIN])
      pins.set(label, userPin)
    },
    tokenDirOf: (label) => {
      // token.object holds the label blank-padded to 32 bytes (CK_TOKEN_INFO.label).
      const padded = Buffer.from(label.padEnd(32, ' '))
      const found = readdirSync(tokenDir).filter((each) => readFileSync(join(tokenDir, each, 'token.object')).includes(padded))
      if (found.length !== 1) throw new Error(`no single token directory holds the label ${label}`)
      return join(tokenDir, found[0]!)
    },
    importKey: (label, value, type, token) => { py(PY_IMPORT, [label, value.toString('hex'), type], token) },
    keygen: (label, keyType) => { tool(['--keygen', '--key-type', keyType, '--label', label, '--sensitive']) },
    listObjects: () => tool(['--list-objects', '--type', 'secrkey']),
    pyHmac: (label, mechanism, message, token) => py(PY_HMAC, [label, mechanism, message.toString('hex')], token),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

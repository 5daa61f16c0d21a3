/**
 * `npm run keys:generate -- --pkcs11 NAME VERSION [--token LABEL] [--pepper] [--bytes N]` (in the
 * image `node dist/scripts/keys-generate.js`): makes a key inside the PKCS#11 token of
 * PKCS11_MODULE (logged in with the PIN in PKCS11_PIN_FILE) and prints the line to add to the keys
 * file. The key never leaves the token: CKA_TOKEN, CKA_PRIVATE and CKA_SENSITIVE true,
 * CKA_EXTRACTABLE false, so neither this script nor hashd ever sees its value.
 *
 * - An HMAC key (the default): a generic secret of N bytes (32; 64 for SHA-512 on tokens that want
 *   a key as long as the digest) made with CKM_GENERIC_SECRET_KEY_GEN, CKA_SIGN and CKA_VERIFY,
 *   labelled `NAME-vVERSION`; the line is `NAME VERSION pkcs11:token=…;object=NAME-vVERSION;type=secret-key`
 *   for HMAC_KEYS_FILE.
 * - A pepper key (`--pepper`): AES-256 made with CKM_AES_KEY_GEN, CKA_ENCRYPT and CKA_DECRYPT,
 *   labelled `pepper-NAMEVERSION`; the line is `NAMEVERSION pkcs11:…` for PEPPER_KEYS_FILE (so
 *   `--pkcs11 k 3 --pepper` makes key id `k3`).
 *
 * A label already in the token is refused: a second object under it would make the URI ambiguous.
 * Exit status: 0 made and printed; 1 the token refused; 2 wrong arguments or configuration.
 */
import { CKA, CKK_AES, CKK_GENERIC_SECRET, CKM, CKO_SECRET_KEY, type Attribute } from '../src/keys/pkcs11/binding.js'
import { KEY_NAME, KEY_NAME_RULE } from '../src/keys/file.js'
import { Pkcs11Token, Pkcs11Unavailable } from '../src/keys/pkcs11/token.js'
import { formatPkcs11Uri } from '../src/keys/pkcs11/uri.js'

const USAGE = 'usage: npm run keys:generate -- --pkcs11 NAME VERSION [--token LABEL] [--pepper] [--bytes N]   (PKCS11_MODULE and PKCS11_PIN_FILE name the module and the PIN)\n'

function fail(message: string, status = 2): never {
  process.stderr.write(`keys:generate: ${message}\n${status === 2 ? USAGE : ''}`)
  process.exit(status)
}

const args = process.argv.slice(2)
let tokenLabel: string | undefined
let pepper = false
let bytes = 32
const positional: string[] = []
let pkcs11 = false
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  if (arg === '--pkcs11') pkcs11 = true
  else if (arg === '--pepper') pepper = true
  else if (arg === '--token') tokenLabel = args[++i] ?? fail('--token needs a label')
  else if (arg === '--bytes') bytes = Number(args[++i])
  else if (arg.startsWith('--')) fail(`unknown option ${arg}`)
  else positional.push(arg)
}
if (!pkcs11) fail('only keys in a PKCS#11 token are made here (--pkcs11); a file key is `openssl rand -base64 32`')
if (positional.length !== 2) fail('give NAME and VERSION')
const [name, version] = positional as [string, string]
if (!KEY_NAME.test(name)) fail(`NAME must be ${KEY_NAME_RULE}`)
if (!/^[1-9]\d{0,8}$/.test(version)) fail('VERSION must be a whole number from 1 to 999999999')
if (!Number.isInteger(bytes) || bytes < 32 || bytes > 128) fail('--bytes must be a whole number from 32 to 128')
if (pepper && bytes !== 32) fail('a pepper key is AES-256: 32 bytes')
if (tokenLabel !== undefined && (tokenLabel === '' || Buffer.byteLength(tokenLabel) > 32)) fail('--token is a token label of 1 to 32 bytes')
const modulePath = process.env.PKCS11_MODULE?.trim()
const pinFile = process.env.PKCS11_PIN_FILE?.trim()
if (!modulePath || !pinFile) fail('set PKCS11_MODULE (the module\'s path) and PKCS11_PIN_FILE (the file holding the user PIN)')

const id = pepper ? `${name}${version}` : name
if (!KEY_NAME.test(id)) fail(`the key id ${pepper ? '(NAME and VERSION together) ' : ''}must be ${KEY_NAME_RULE}`)
const label = pepper ? `pepper-${id}` : `${name}-v${version}`
const template: Attribute[] = [
  { type: CKA.CLASS, value: CKO_SECRET_KEY },
  { type: CKA.KEY_TYPE, value: pepper ? CKK_AES : CKK_GENERIC_SECRET },
  { type: CKA.VALUE_LEN, value: bytes },
  { type: CKA.LABEL, value: Buffer.from(label, 'utf8') },
  { type: CKA.TOKEN, value: true },
  { type: CKA.PRIVATE, value: true },
  { type: CKA.SENSITIVE, value: true },
  { type: CKA.EXTRACTABLE, value: false },
  ...(pepper
    ? [{ type: CKA.ENCRYPT, value: true }, { type: CKA.DECRYPT, value: true }, { type: CKA.SIGN, value: false }]
    : [{ type: CKA.SIGN, value: true }, { type: CKA.VERIFY, value: true }, { type: CKA.ENCRYPT, value: false }, { type: CKA.DECRYPT, value: false }]),
]

const token = new Pkcs11Token({ modulePath, pinFile, sessions: 1, queueMax: 0 })
try {
  await token.withSession(tokenLabel === undefined ? {} : { token: tokenLabel }, async (module, session) => {
    const existing = await module.findObjects(session, [{ type: CKA.CLASS, value: CKO_SECRET_KEY }, { type: CKA.LABEL, value: Buffer.from(label, 'utf8') }], 1)
    if (existing.length > 0) fail(`the token already has a secret key labelled ${label}; choose another VERSION`, 1)
    await module.generateKey(session, pepper ? CKM.AES_KEY_GEN : CKM.GENERIC_SECRET_KEY_GEN, template)
  })
} catch (error) {
  if (error instanceof Pkcs11Unavailable) fail(error.message, 1)
  fail(`the token refused: ${(error as Error).message}`, 1)
} finally {
  await token.close()
}
const uri = formatPkcs11Uri({ ...(tokenLabel === undefined ? {} : { token: tokenLabel }), object: label })
process.stderr.write(`made ${pepper ? 'an AES-256 pepper key' : `a ${bytes}-byte HMAC key`} labelled ${label} in the token (sensitive, not extractable); add this line to ${pepper ? 'PEPPER_KEYS_FILE' : 'HMAC_KEYS_FILE'}:\n`)
process.stdout.write(`${pepper ? id : `${name} ${version}`} ${uri}\n`)

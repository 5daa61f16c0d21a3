/**
 * PKCS#11 URIs (RFC 7512) naming a key in a token: `pkcs11:token=hashd;object=orders-v3`.
 *
 * - **Path attributes** (`;`-separated, §2.3): `token` (the token's label), `serial`, `object`
 *   (CKA_LABEL), `id` (CKA_ID, bytes, usually percent-encoded), `type` (`secret-key`; `secret` is
 *   read the same). `manufacturer`, `model`, `library-*` and `slot-*` are refused: the module is
 *   PKCS11_MODULE's, and a token is told by its label or serial.
 * - **Query attributes** (after `?`, `&`-separated): `pin-source` only, as a `file:` URI of an
 *   absolute path (`?pin-source=file:/run/secrets/tenant-a-pin` or `file:///…`): the file holding
 *   the user PIN of the URI's token (token.ts), as p11-kit, GnuTLS and OpenSSL's pkcs11 provider
 *   read it. `pin-value` is refused (a PIN written in a keys file), and so are pin-source's other
 *   forms (`|command`: hashd runs no program for a PIN; a dialog: there is no one to ask) and
 *   `module-name`/`module-path` (the module is PKCS11_MODULE).
 * - **Values are percent-decoded** (§2.3: a value is `pk11-pchar`s, `%XX` for any other byte).
 *   `token` and `object` are UTF-8 text; `id` is bytes. An attribute appears at most once.
 * - **A key is named by `object` or `id`** (or both), and its token by `token` or `serial`, or by
 *   neither when the module has one token.
 *
 * No regular expression reads the URI: it is split on fixed characters and decoded byte by byte.
 * Messages never quote it (it sits in a keys file among secrets: file.ts).
 */

export interface Pkcs11Uri {
  /** The token's label (CK_TOKEN_INFO.label), or undefined for any token. */
  token?: string
  serial?: string
  /** CKA_LABEL. */
  object?: string
  /** CKA_ID. */
  id?: Buffer
  /** The absolute path of the file holding the token's user PIN (`pin-source=file:…`), or undefined for PKCS11_PIN_FILE. */
  pinSource?: string
  /** The URI as written, to tell keys apart and to name them where a key's name is shown. */
  text: string
}

export const PKCS11_SCHEME = 'pkcs11:'
/** A URI longer than this is refused (the RFC sets none; a label is 32 bytes, an id rarely more than 32). */
export const PKCS11_URI_MAX = 1024

const PATH_ATTRIBUTES = ['token', 'serial', 'object', 'id', 'type'] as const
const SECRET_KEY_TYPES = ['secret-key', 'secret']

/** Whether a field names a PKCS#11 object rather than holding a secret. */
export function isPkcs11Uri(text: string): boolean {
  return text.slice(0, PKCS11_SCHEME.length).toLowerCase() === PKCS11_SCHEME
}

/** Thrown with a reason that quotes nothing of the URI. */
export class Pkcs11UriError extends Error {}

/** RFC 3986 unreserved, plus RFC 7512's pk11-pchar extras (`:` `[` `]` `@` `!` `$` `'` `(` `)` `*` `+` `,` `=` `&`). */
function isPlain(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)
    || '-._~:[]@!$\'()*+,=&'.includes(String.fromCharCode(code))
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10
  return -1
}

/** RFC 7512's pk11-qres-avail adds these to a query value's plain characters (and takes `&` and `;` away). */
const QUERY_EXTRA = '/?|'

/** The bytes of a percent-encoded value (`inQuery`: a query attribute's, RFC 7512 pk11-qchar). */
export function percentDecode(value: string, name: string, inQuery = false): Buffer {
  const bytes: number[] = []
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index)
    if (code === 0x25) {
      const high = hexValue(value.charCodeAt(index + 1))
      const low = hexValue(value.charCodeAt(index + 2))
      if (high < 0 || low < 0) throw new Pkcs11UriError(`the value of ${name}= has a % not followed by two hex digits`)
      bytes.push(high * 16 + low)
      index += 2
    } else if (inQuery ? code !== 0x26 && code !== 0x3b && (isPlain(code) || QUERY_EXTRA.includes(String.fromCharCode(code))) : isPlain(code)) {
      bytes.push(code)
    } else {
      throw new Pkcs11UriError(`the value of ${name}= has a character that must be percent-encoded (RFC 7512 §2.3)`)
    }
  }
  return Buffer.from(bytes)
}

function text(bytes: Buffer, name: string): string {
  const decoded = new TextDecoder('utf-8', { fatal: false }).decode(bytes)
  if (decoded.includes('\uFFFD') || !bytes.equals(Buffer.from(decoded, 'utf8'))) throw new Pkcs11UriError(`the value of ${name}= is not UTF-8`)
  return decoded
}

/**
 * The path a pin-source names (RFC 7512 §2.3 leaves its form to the application; a `file:` URI is
 * the form every reader of it takes): `file:/path` or `file:///path` (RFC 8089 §2), absolute.
 */
function pinSourcePath(value: string): string {
  const path = value.startsWith('file:///') ? value.slice('file://'.length) : value.startsWith('file:/') && !value.startsWith('file://') ? value.slice('file:'.length) : null
  if (path === null) throw new Pkcs11UriError('pin-source is a file: URI of an absolute path (file:/path or file:///path); hashd runs no program and opens no dialog for a PIN')
  if (path.includes('\0') || path.split('/').includes('..')) throw new Pkcs11UriError('the path of pin-source has no .. and no NUL')
  return path
}

/** Parses a `pkcs11:` URI naming a secret key; throws Pkcs11UriError saying what is wrong. */
export function parsePkcs11Uri(uri: string): Pkcs11Uri {
  if (uri.length > PKCS11_URI_MAX) throw new Pkcs11UriError(`a PKCS#11 URI is at most ${PKCS11_URI_MAX} characters`)
  if (!isPkcs11Uri(uri)) throw new Pkcs11UriError('a PKCS#11 URI starts with pkcs11:')
  const rest = uri.slice(PKCS11_SCHEME.length)
  const question = rest.indexOf('?')
  const path = question < 0 ? rest : rest.slice(0, question)
  const result: Pkcs11Uri = { text: uri }
  if (question >= 0) {
    const query = rest.slice(question + 1)
    if (query === '') throw new Pkcs11UriError('a ? is followed by no query attribute')
    for (const attribute of query.split('&')) {
      const equals = attribute.indexOf('=')
      const name = equals < 0 ? attribute : attribute.slice(0, equals)
      if (name === 'pin-value') throw new Pkcs11UriError('the PIN is never written in the URI (pin-value=): name a file holding it with pin-source=file:/path, or use PKCS11_PIN_FILE')
      if (name !== 'pin-source') throw new Pkcs11UriError('query attributes other than pin-source are not taken (the module is PKCS11_MODULE)')
      if (equals < 0) throw new Pkcs11UriError('pin-source is written pin-source=file:/path')
      if (result.pinSource !== undefined) throw new Pkcs11UriError('pin-source= is given twice')
      result.pinSource = pinSourcePath(text(percentDecode(attribute.slice(equals + 1), name, true), name))
    }
  }
  const seen = new Set<string>()
  for (const attribute of path === '' ? [] : path.split(';')) {
    const equals = attribute.indexOf('=')
    if (equals <= 0) throw new Pkcs11UriError('each path attribute is written name=value, separated by ;')
    const name = attribute.slice(0, equals)
    if (!(PATH_ATTRIBUTES as readonly string[]).includes(name)) {
      throw new Pkcs11UriError(`path attributes are ${PATH_ATTRIBUTES.join(', ')}; this one is not taken (the module is PKCS11_MODULE)`)
    }
    if (seen.has(name)) throw new Pkcs11UriError(`${name}= is given twice`)
    seen.add(name)
    const bytes = percentDecode(attribute.slice(equals + 1), name)
    if (name === 'id') {
      if (bytes.length === 0) throw new Pkcs11UriError('id= is empty')
      result.id = bytes
    } else if (name === 'type') {
      if (!SECRET_KEY_TYPES.includes(text(bytes, name))) throw new Pkcs11UriError('type= must be secret-key: hashd keeps secret keys in the token')
    } else {
      const value = text(bytes, name)
      if (value === '') throw new Pkcs11UriError(`${name}= is empty`)
      if ((name === 'token' || name === 'object') && bytes.length > (name === 'token' ? 32 : 256)) {
        throw new Pkcs11UriError(`${name}= is longer than a ${name === 'token' ? 'token label (32 bytes)' : 'label hashd looks for (256 bytes)'}`)
      }
      if (name === 'token') result.token = value
      else if (name === 'serial') result.serial = value
      else result.object = value
    }
  }
  if (result.object === undefined && result.id === undefined) throw new Pkcs11UriError('the URI names no key: give object= (its label) or id=')
  return result
}

/** The URI with its values written canonically (for keys files printed by keys:generate). */
export function formatPkcs11Uri(parts: { token?: string, object: string }): string {
  const encode = (value: string) => [...Buffer.from(value, 'utf8')].map((byte) => (isPlain(byte) && byte !== 0x3d && byte !== 0x26 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('')
  return `${PKCS11_SCHEME}${parts.token === undefined ? '' : `token=${encode(parts.token)};`}object=${encode(parts.object)};type=secret-key`
}

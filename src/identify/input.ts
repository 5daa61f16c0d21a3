/**
 * Real input: what people paste is rarely a bare hash. Each interpretation is a substring that
 * may be the hash, with a factor saying how much to believe that reading:
 * - the whole (trimmed) string;
 * - without a `0x` prefix;
 * - the second field of an /etc/shadow line (`user:hash:lastchg:min:max:warn:inactive:expire:`);
 * - the NT and LM fields of a pwdump or impacket secretsdump line (`user:rid:LM:NT:::`, with
 *   secretsdump's `(status=…)` notes), and the key of secretsdump's `user:rc4_hmac:NT`;
 * - the part after `user:` (htpasswd lines, `user:hash` dumps);
 * - the fingerprint in `openssl x509 -fingerprint` output (`SHA256 Fingerprint=AB:CD:…`) and in an
 *   `ssh-keygen -l` line (`256 SHA256:… comment (ED25519)`).
 */

export interface Interpretation {
  text: string
  /** Multiplies the candidates' weights. */
  factor: number
  /** Restricts the reading to one format name (a pwdump field is known to be LM or NT). */
  only?: string
  /** Which part of the line this reading is, where it is not the whole string: it decides the next commands. */
  kind?: ReadingKind
  /** The account name the line gives (pwdump, shadow, `user:hash`), kept in the result. */
  user?: string
}

/**
 * - `hex-prefix`: the hex after `0x`; `fingerprint`: the value of a fingerprint line;
 * - `pwdump-nt` / `pwdump-lm`: the fourth / third field of a pwdump line; `shadow`: the second field
 *   of an /etc/shadow line; `rc4-key`: the third field of secretsdump's `user:rc4_hmac:key`;
 *   `user`: the part after `user:` (hashcat's `--username` lines).
 */
export type ReadingKind = 'hex-prefix' | 'fingerprint' | 'pwdump-nt' | 'pwdump-lm' | 'rc4-key' | 'shadow' | 'user'

/** A user name as /etc/passwd and htpasswd allow it: no colon, no whitespace, no `$`. */
const USER_NAME = /^[^\s:$*]{1,64}$/
const SHADOW_TAIL = /^(?:\d{0,10})$/
/**
 * pwdump and impacket secretsdump (`domain\\user:rid:LM:NT:::`), with the ` (status=Enabled)` and
 * ` (pwdLastSet=…)` notes that secretsdump's -user-status and -pwd-last-set options append.
 */
const PWDUMP = /^([^:\s]{0,64}):\d{1,10}:([0-9A-Fa-f]{32}|NO PASSWORD\*{21}):([0-9A-Fa-f]{32}|NO PASSWORD\*{21}):{0,4}(?: \((?:status|pwdLastSet)=[^()]{0,64}\)){0,2}$/
/** secretsdump's Kerberos keys (`user:rc4_hmac:NT`): the RC4 key is the NT hash. */
const SECRETSDUMP_RC4 = /^([^:\s]{1,64}):rc4_hmac:([0-9a-fA-F]{32})$/
/** The LM hash of the empty password: pwdump prints it when LM storage is off. */
const EMPTY_LM = 'aad3b435b51404eeaad3b435b51404ee'
/** `user:hash` is a guess: a structured hash after the colon still wins, a bare digest less so. */
const USER_READING_FACTOR = 0.25
/** Readings of user:hash and shadow lines are only tried on inputs of plausible size. */
const MAX_LINE = 8192
/** `openssl x509 -fingerprint` prints `<digest> Fingerprint=` then colon hex (apps/x509.c). */
const OPENSSL_FINGERPRINT = /^[A-Za-z0-9-]{2,16} Fingerprint=([0-9A-Fa-f:]{11,400})$/
/** `ssh-keygen -l` prints bits, the fingerprint, the comment and the key type (ssh-keygen.c). */
const SSH_KEYGEN_LINE = /^\d{3,5} ((?:SHA256|MD5|SHA1|SHA384|SHA512):[A-Za-z0-9+/:=]{16,128})(?: [^\n]{0,512})?$/

export function interpretations(trimmed: string): Interpretation[] {
  const readings: Interpretation[] = [{ text: trimmed, factor: 1 }]
  if (/^0[xX][0-9a-fA-F]{8,}$/.test(trimmed) && trimmed.length <= MAX_LINE) readings.push({ text: trimmed.slice(2), factor: 0.9, kind: 'hex-prefix' })
  if (trimmed.length > MAX_LINE || !trimmed.includes(':')) return readings

  const fingerprint = OPENSSL_FINGERPRINT.exec(trimmed) ?? SSH_KEYGEN_LINE.exec(trimmed)
  if (fingerprint) {
    readings.push({ text: fingerprint[1]!, factor: 1, kind: 'fingerprint' })
    return readings
  }

  const pwdump = PWDUMP.exec(trimmed)
  if (pwdump) {
    const [, user = '', lm = '', nt = ''] = pwdump
    const named = user === '' ? {} : { user }
    if (!nt.startsWith('NO')) readings.push({ text: nt, factor: 1000, only: 'ntlm', kind: 'pwdump-nt', ...named })
    if (lm.toLowerCase() !== EMPTY_LM && !lm.startsWith('NO')) readings.push({ text: lm, factor: 100, only: 'lm', kind: 'pwdump-lm', ...named })
    return readings
  }
  const rc4 = SECRETSDUMP_RC4.exec(trimmed)
  if (rc4) {
    readings.push({ text: rc4[2]!, factor: 1000, only: 'ntlm', kind: 'rc4-key', user: rc4[1]! })
    return readings
  }

  const fields = trimmed.split(':')
  const user = fields[0] ?? ''
  if (fields.length === 9 && USER_NAME.test(user) && fields.slice(2).every((field) => SHADOW_TAIL.test(field))) {
    // /etc/shadow (shadow(5)): the hash is the second field; `!` or `*` prefixes lock the account.
    const hash = (fields[1] ?? '').replace(/^!+/, '')
    if (hash.length > 0) readings.push({ text: hash, factor: 1, kind: 'shadow', user })
    return readings
  }
  // A first field that is itself a long hex string is a digest (digest:salt), not a user name.
  if (USER_NAME.test(user) && !/^[0-9a-fA-F]{8,}$/.test(user)) {
    readings.push({ text: trimmed.slice(user.length + 1), factor: USER_READING_FACTOR, kind: 'user', user })
  }
  return readings
}

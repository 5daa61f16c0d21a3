/**
 * Real input: what people paste is rarely a bare hash. Each interpretation is a substring that
 * may be the hash, with a factor saying how much to believe that reading:
 * - the whole (trimmed) string;
 * - without a `0x` prefix;
 * - the second field of an /etc/shadow line (`user:hash:lastchg:min:max:warn:inactive:expire:`);
 * - the NT and LM fields of a pwdump line (`user:rid:LM:NT:::`);
 * - the part after `user:` (htpasswd lines, `user:hash` dumps).
 */

export interface Interpretation {
  text: string
  /** Multiplies the candidates' weights. */
  factor: number
  /** Restricts the reading to one format name (a pwdump field is known to be LM or NT). */
  only?: string
}

/** A user name as /etc/passwd and htpasswd allow it: no colon, no whitespace, no `$`. */
const USER_NAME = /^[^\s:$*]{1,64}$/
const SHADOW_TAIL = /^(?:\d{0,10})$/
const PWDUMP = /^[^:\s]{0,64}:\d{1,10}:([0-9A-Fa-f]{32}|NO PASSWORD\*{21}):([0-9A-Fa-f]{32}|NO PASSWORD\*{21}):{0,4}$/
/** The LM hash of the empty password: pwdump prints it when LM storage is off. */
const EMPTY_LM = 'aad3b435b51404eeaad3b435b51404ee'
/** `user:hash` is a guess: a structured hash after the colon still wins, a bare digest less so. */
const USER_READING_FACTOR = 0.25
/** Readings of user:hash and shadow lines are only tried on inputs of plausible size. */
const MAX_LINE = 8192

export function interpretations(trimmed: string): Interpretation[] {
  const readings: Interpretation[] = [{ text: trimmed, factor: 1 }]
  if (/^0[xX][0-9a-fA-F]{8,}$/.test(trimmed) && trimmed.length <= MAX_LINE) readings.push({ text: trimmed.slice(2), factor: 0.9 })
  if (trimmed.length > MAX_LINE || !trimmed.includes(':')) return readings

  const pwdump = PWDUMP.exec(trimmed)
  if (pwdump) {
    const [, lm = '', nt = ''] = pwdump
    readings.push({ text: nt, factor: 1000, only: 'ntlm' })
    if (lm.toLowerCase() !== EMPTY_LM && !lm.startsWith('NO')) readings.push({ text: lm, factor: 100, only: 'lm' })
    return readings
  }

  const fields = trimmed.split(':')
  const user = fields[0] ?? ''
  if (fields.length === 9 && USER_NAME.test(user) && fields.slice(2).every((field) => SHADOW_TAIL.test(field))) {
    // /etc/shadow (shadow(5)): the hash is the second field; `!` or `*` prefixes lock the account.
    const hash = (fields[1] ?? '').replace(/^!+/, '')
    if (hash.length > 0) readings.push({ text: hash, factor: 1 })
    return readings
  }
  // A first field that is itself a long hex string is a digest (digest:salt), not a user name.
  if (USER_NAME.test(user) && !/^[0-9a-fA-F]{8,}$/.test(user)) {
    readings.push({ text: trimmed.slice(user.length + 1), factor: USER_READING_FACTOR })
  }
  return readings
}

/**
 * Unicode in passwords (NIST SP 800-63B-4 §3.1.1.2): a password is normalized to **NFKC** (UAX #15
 * §12.1, normalization for stabilized strings) before it is compared with any list and before it
 * is hashed, and its length is counted in code points.
 *
 * NFKC rather than NFKD: text typed on almost every keyboard is already NFC, and NFKC leaves NFC
 * text without compatibility characters unchanged, so for nearly every password the normalized
 * bytes are the bytes hashd hashed before it normalized at all; NFKD would change the bytes of
 * every password with an accent. What NFKC does change (decomposed accents from some input
 * methods, full-width letters, ligatures such as "ﬁ") are the ways one password reaches the
 * server as different code points.
 *
 * Comparisons are also case-insensitive: a list entry matches the password in any case
 * (`Password` is as common as `password`).
 */

/** How passwords are prepared for hashing (PASSWORD_NORMALIZATION). */
export type Normalization = 'nfkc' | 'none'

/** The form a password is hashed in. */
export function passwordForHashing(text: string, normalization: Normalization): string {
  return normalization === 'nfkc' ? text.normalize('NFKC') : text
}

/** The form a password (or a list entry) is compared in: NFKC, lowercase. */
export function comparisonKey(text: string): string {
  return text.normalize('NFKC').toLowerCase()
}

/** Length in code points (each astral character counts once, as NIST asks). */
export function codePointLength(text: string): number {
  let length = 0
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index)
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) index++
    }
    length++
  }
  return length
}

/** Whether a code point is a letter, by Unicode's general category L. */
const LETTER = /^\p{L}$/u

/**
 * A key without the non-letters at either end (`password123!` → `password`, `2024alice` →
 * `alice`): the commonest way a listed word is dressed up. Letters inside are kept, so a
 * passphrase stays whole. Written as a loop, not a regular expression, to stay linear.
 */
export function lettersCore(key: string): string {
  const characters = [...key]
  let start = 0
  let end = characters.length
  while (start < end && !LETTER.test(characters[start] as string)) start++
  while (end > start && !LETTER.test(characters[end - 1] as string)) end--
  return characters.slice(start, end).join('')
}

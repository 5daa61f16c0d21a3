/**
 * The built-in list of common passwords, so that a server with no setup refuses `123456`: the
 * `passwords-common` dictionary of @zxcvbn-ts/language-common (zxcvbn-ts's frequency-ranked list of
 * 49,233 passwords from leaked password sets, lowercase), well above OWASP ASVS 5.0 6.2.4's 3,000.
 * It is read once, at start, into a compact WordList.
 */
import { dictionary } from '@zxcvbn-ts/language-common'
import { WordList } from './word-list.js'

export const COMMON_SOURCE = '@zxcvbn-ts/language-common (passwords-common)'

let common: WordList | undefined

export function commonPasswords(): WordList {
  common ??= WordList.from(dictionary['passwords-common'])
  return common
}

/**
 * The built-in list of common passwords, so that a server with no setup refuses `123456`: the
 * `passwords-common` dictionary of @zxcvbn-ts/language-common (zxcvbn-ts's frequency-ranked list of
 * 49,233 passwords from leaked password sets, lowercase), well above OWASP ASVS 5.0 6.2.4's 3,000.
 * It is read once, at start, into a compact WordList.
 */
import { createRequire } from 'node:module'
import { WordList } from './word-list.js'

export const COMMON_SOURCE = '@zxcvbn-ts/language-common (passwords-common)'

let common: WordList | undefined

export function commonPasswords(): WordList {
  common ??= readOnce()
  return common
}

/**
 * The package's list, read through its CommonJS build and then dropped from require's cache: an
 * ES import would keep the module, and with it 49,233 strings and the source they come from (2 MB
 * of heap), for the life of the process, beside the 0.5 MB WordList that is all the check needs.
 */
function readOnce(): WordList {
  const require = createRequire(import.meta.url)
  const entry = require.resolve('@zxcvbn-ts/language-common')
  const before = new Set(Object.keys(require.cache))
  try {
    const { dictionary } = require(entry) as typeof import('@zxcvbn-ts/language-common')
    return WordList.from(dictionary['passwords-common'])
  } finally {
    for (const loaded of Object.keys(require.cache)) if (!before.has(loaded)) delete require.cache[loaded]
  }
}

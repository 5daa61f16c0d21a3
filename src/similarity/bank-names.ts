/**
 * What a similarity bank is called: its file's name in SIMILARITY_BANKS_DIR without `.bank`. The
 * same names are what a match request's `banks` and an API key's `banks=` hold. Data only, so the
 * keys file's parser can read it without the bank library.
 */
export const BANK_EXTENSION = '.bank'
/** A bank's name; bounded and anchored, no repetition of a group (safe for client input). */
export const BANK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const BANK_NAME_RULE = '1 to 64 letters, digits, dots, underscores and hyphens, starting with a letter or digit'

/**
 * The fuzz targets, as data: each is a module of fuzz/targets/ exporting `fuzz(data)`, its seed
 * corpus in fuzz/corpus/<name>/ and the inputs of its past findings in fuzz/findings/<name>/
 * (both checked in; test/fuzz-corpus.test.ts runs them all in `npm test`).
 */
export interface FuzzTarget {
  name: string
  /** What it fuzzes, for `npm run fuzz -- --list`. */
  about: string
  /** Jazzer.js's --sync: the target answers synchronously (much faster); else it returns a promise. */
  sync: boolean
  /** libFuzzer's -max_len: the largest input it makes, in bytes. */
  maxLen: number
  /** Jazzer.js's --includes: the files whose coverage guides the fuzzer (compiled paths). */
  includes: string[]
}

/** Per input: longer is a hang, and fails the run (libFuzzer's -timeout, through Jazzer.js's --timeout). */
export const INPUT_TIMEOUT_MS = 5000
/** The run's resident memory limit (libFuzzer's -rss_limit_mb): more fails it as out-of-memory. */
export const RSS_LIMIT_MB = 2048

export const TARGETS: readonly FuzzTarget[] = [
  { name: 'multipart', about: 'the multipart/form-data reader, read whole and in chunks (src/upload/multipart.ts)', sync: true, maxLen: 4096, includes: ['dist/src/upload/'] },
  { name: 'delimiter-search', about: 'the multipart delimiter search against Buffer.indexOf (src/upload/delimiter-search.ts)', sync: true, maxLen: 4096, includes: ['dist/src/upload/delimiter-search'] },
  { name: 'checksum-list', about: 'checksum lists and the expected field (src/checksums/list.ts, src/domain/expected.ts)', sync: true, maxLen: 8192, includes: ['dist/src/checksums/', 'dist/src/domain/expected', 'dist/src/algorithms/registry'] },
  { name: 'minisign', about: 'minisign signatures and keys (src/checksums/signatures/minisign.ts, ed25519.ts)', sync: false, maxLen: 2048, includes: ['dist/src/checksums/signatures/'] },
  { name: 'signify', about: 'signify signatures, detached and embedded (src/checksums/signatures/signify.ts, ed25519.ts)', sync: false, maxLen: 2048, includes: ['dist/src/checksums/signatures/'] },
  { name: 'openpgp-armor', about: 'OpenPGP signatures, keys and clearsigned lists, armored and binary (src/checksums/signatures/openpgp.ts over openpgp)', sync: false, maxLen: 8192, includes: ['dist/src/checksums/signatures/', 'node_modules/openpgp/'] },
  { name: 'identify-input', about: 'identify input: lines, potfiles, dumps, readings, unwrapping, the format table (src/identify/)', sync: true, maxLen: 4096, includes: ['dist/src/identify/'] },
  { name: 'pepper', about: 'the $pepper$ hash format and the digest envelopes (src/algorithms/password/pepper.ts, src/domain/envelopes.ts)', sync: true, maxLen: 2048, includes: ['dist/src/algorithms/password/pepper', 'dist/src/algorithms/password/common', 'dist/src/domain/envelopes'] },
  { name: 'keys-file', about: 'API_KEYS_FILE, PEPPER_KEYS_FILE and HMAC_KEYS_FILE on the key ring (src/keys/: file.ts, ring.ts, api-keys.ts, pepper.ts, hmac.ts)', sync: true, maxLen: 4096, includes: ['dist/src/keys/'] },
  { name: 'store-metadata', about: 'the verify form\'s text metadata readers on inputs built in their shapes: S3, GCS, Azure, Dropbox and OneDrive JSON, magnet links, git ls-tree lines (src/content-hashes/metadata/)', sync: true, maxLen: 4096, includes: ['dist/src/content-hashes/metadata/'] },
  { name: 'torrent-metadata', about: 'the bencode decoder and the metadata readers: .torrent, magnet, S3, GCS, Azure, Dropbox, OneDrive, git ls-tree (src/content-hashes/bencode.ts, metadata/)', sync: true, maxLen: 8192, includes: ['dist/src/content-hashes/bencode', 'dist/src/content-hashes/metadata/'] },
  { name: 'similarity-hashes', about: 'the ssdeep and TLSH hash parsers and comparisons, and /api/similarity/compare\'s compareHashes (src/similarity/: ssdeep.ts, tlsh.ts, compare.ts)', sync: true, maxLen: 1024, includes: ['dist/src/similarity/ssdeep', 'dist/src/similarity/tlsh', 'dist/src/similarity/compare'] },
  { name: 'image-sniff', about: 'PDQ\'s image path: sniffing, the pixel-bomb check, sharp\'s decode and the hash (src/similarity/pdq/)', sync: false, maxLen: 16384, includes: ['dist/src/similarity/pdq/'] },
  { name: 'bank-import', about: 'the similarity bank import\'s line reader: RFC 4180 fields, the header line, every bank type\'s hash forms, ids and labels (src/similarity/banks/lines.ts)', sync: true, maxLen: 4096, includes: ['dist/src/similarity/banks/lines', 'dist/src/similarity/banks/types'] },
  { name: 'bank-file', about: 'opening damaged, cut and foreign similarity bank files, and searching them (src/similarity/banks/open.ts, format.ts)', sync: false, maxLen: 8192, includes: ['dist/src/similarity/banks/'] },
]

export const targetNamed = (name: string): FuzzTarget | undefined => TARGETS.find((target) => target.name === name)

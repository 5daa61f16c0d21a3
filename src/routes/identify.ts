import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Readable } from 'node:stream'
import { batchJson, identifyBatch, identifyEntry, MAX_IDENTIFY_ENTRIES, MAX_RESPONSE_MATCHES, readEntries } from '../identify/batch.js'
import { catalog } from '../identify/catalog.js'
import { AMBIGUOUS_RATIO, POPULAR_PRIOR } from '../identify/ranking.js'
import { identify } from '../identify/engine.js'
import { problems, type Problem } from '../problem.js'
import type { Config } from '../config.js'
import type { IdentifyOptions } from '../identify/engine.js'
import { documentedAs, errorResponses, errorResponsesWith } from './schemas.js'

/** A line (a hash, or one string of `hashes` without line breaks) longer than this is 413: no hash format is anywhere near it. */
export const MAX_IDENTIFY_BYTES = 64 * 1024
/** `hashes` holds at most this many strings, and at most MAX_IDENTIFY_ENTRIES lines in all. */
export const MAX_IDENTIFY_BATCH = MAX_IDENTIFY_ENTRIES
/**
 * The request body may be this large on this route alone (the server's BODY_LIMIT applies to the
 * others): a 10,000-line dump of NetNTLMv2 captures is about 5 MiB.
 */
export const IDENTIFY_BODY_LIMIT = 8 * 1024 * 1024

const NORMALIZATIONS = ['quotes', 'brackets', 'trailing-comma', 'trailing-semicolon', 'bullet', 'json-field', 'yaml-field', 'sql-values', 'log-prefix', 'potfile-plaintext'] as const

const Match = Type.Object({
  algorithm: Type.String({ description: 'Canonical name; the registry name where /api/verify accepts the format' }),
  displayName: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1, description: 'Probability in [0, 1]; a response\'s confidences sum to at most 1' }),
  hashcat: Type.Union([Type.Integer(), Type.Null()], { description: 'hashcat mode (-m)' }),
  john: Type.Union([Type.String(), Type.Null()], { description: 'John the Ripper --format' }),
  category: Type.String(),
  description: Type.String(),
  params: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()]), { description: 'Parameters the string carries: cost, memory, rounds, salt…' })),
  verifiable: Type.Boolean({ description: 'True where POST /api/verify on this server accepts this string: the format is one it reads, its costs are within the server\'s caps, and a peppered hash (`$pepper$`) names a key the server holds' }),
  variants: Type.Optional(Type.Array(Type.Object({ hashcat: Type.Integer(), displayName: Type.String() }), {
    description: 'Other hashcat modes that read exactly this syntax, which the string cannot tell apart from `hashcat`: '
      + 'VeraCrypt\'s PRF and XTS size, or the md5($salt.$pass), HMAC-MD5, PostgreSQL… modes beside md5($pass.$salt) '
      + '(all `32 hex:salt`). The match stands for all of them; `hashcat` is the commonest, and the others are worth trying too',
  })),
  format: Type.Optional(Type.String({
    description: 'The text form or wrapper around the digest named by `algorithm`, where the string is not its bare hex: '
      + '`base64` (base64 or base64url, padded or not), `colon-hex` (X.509 and legacy SSH fingerprints), `sri` (Subresource Integrity, npm/yarn `integrity`, Nix SRI), '
      + '`oci-digest` (OCI/Docker `sha256:` + hex), `nix-base32`, `openssh-fingerprint` (`SHA256:` base64, `MD5:` colon hex), `go-sum-h1`, `git-object-id`, `s3-multipart-etag`. '
      + 'Where `verifiable` is true, POST /api/verify takes the string as it is and checks the digest of the input against the one it holds',
  })),
  problem: Type.Optional(Type.String({
    description: 'Present on a near miss: the string almost has this format but is not valid as it stands (typically truncated), '
      + 'e.g. "checksum has 40 characters; sha512-crypt has 86". Such a match has a low confidence and is never verifiable',
  })),
  verifyAlgorithm: Type.Optional(Type.String({
    description: 'On a verifiable match: the name to give POST /api/verify as `algorithm` (usually `algorithm` itself; `mysql41` for `mysql41-bare`; the scheme inside for a peppered hash)',
  })),
  withheld: Type.Optional(Type.Array(Type.String(), {
    description: 'Parameters this reading took from the text after the line\'s last colon (the salt of `hash:salt`, the user of `hash:user`), left out of `params`: '
      + 'that text may be the plaintext of a potfile line `hash:plain`, and hashd never sends a plaintext back. Send `potfile: true` to read the line as a potfile line',
  })),
  commands: Type.Optional(Type.Object({
    hashcat: Type.Optional(Type.String({ description: 'e.g. `hashcat -m 1000 -a 0 hashes.txt wordlist.txt`; with `--username` for user:hash lines, after `cut` for pwdump and shadow lines' })),
    john: Type.Optional(Type.String({ description: 'e.g. `john --format=nt --wordlist=wordlist.txt hashes.txt`' })),
  }, { description: 'The command lines to run next, with the pasted lines saved in hashes.txt (less the wrappers in `normalized`) and a word list in wordlist.txt. Absent on near misses and where neither tool has the format' })),
}, {
  description: 'One candidate format. Where several hashcat modes share one syntax they are one match: `hashcat` names the commonest and `variants` lists the rest',
})

const identificationFields = {
  length: Type.Integer({ description: 'Length of the string identified: the trimmed input less the wrappers listed in `normalized`' }),
  matches: Type.Array(Match, { description: 'Most likely first; ties break the same way every time' }),
  ambiguous: Type.Boolean({ description: `True when the second match's confidence is at least ${AMBIGUOUS_RATIO} times the first's (32 hex digits: MD5, NTLM or MD4): do not take the first blindly` }),
  normalized: Type.Optional(Type.Array(Type.Union(NORMALIZATIONS.map((name) => Type.Literal(name))), {
    description: 'What was removed before matching, in the order peeled from the outside in: surrounding quotes (ASCII, backtick, typographic, a one-line code fence), brackets, '
      + 'a trailing comma or semicolon, a list bullet, a JSON member `"hash": "…"`, a YAML line `hash: …`, a quoted field of an SQL `VALUES (…)` tuple, '
      + 'a log label such as Responder\'s `[SMB] NTLMv2-SSP Hash : `, a potfile plaintext. A wrapper is only removed where the string does not identify better as it is, '
      + 'so formats that contain quotes, braces or commas are read whole. The answer is the one the bare string gets',
  })),
  user: Type.Optional(Type.String({ description: 'The account name the line gives: pwdump/secretsdump, /etc/shadow, hashcat --username (user:hash), NetNTLM captures, AS-REP roasting' })),
}

const Identification = Type.Object(identificationFields)

const BatchResult = Type.Object({
  ...identificationFields,
  item: Type.Optional(Type.Integer({ description: 'For a line of a multi-line string: the index of that string in `hashes`' })),
  line: Type.Optional(Type.Integer({ description: 'For a line of a multi-line string: its line number, from 1' })),
  omitted: Type.Optional(Type.Integer({ description: `Matches left out, by \`top\` or because a response lists at most ${MAX_RESPONSE_MATCHES} in all (each result at most ${MAX_RESPONSE_MATCHES} ÷ entries: 3 for 10,000 lines)` })),
})

const Batch = Type.Object({
  results: Type.Array(BatchResult, { description: 'One per entry, in order: a string without line breaks is one entry; a multi-line string gives one per line, less blank lines and tool chatter' }),
  summary: Type.Array(Type.Object({
    algorithm: Type.String(),
    displayName: Type.String(),
    hashcat: Type.Union([Type.Integer(), Type.Null()]),
    john: Type.Union([Type.String(), Type.Null()]),
    count: Type.Integer({ minimum: 1 }),
  }), { description: 'The first matches counted per format, most frequent first' }),
  unidentified: Type.Integer({ description: 'Entries with no match' }),
  skipped: Type.Integer({ description: 'Lines of multi-line strings left out: blank, `[*] …` status lines (impacket), Responder\'s non-hash lines, `#` comments, code fences' }),
})

/**
 * `hash` and the strings of `hashes` are documented as not empty and not only white space
 * (`minLength` and the pattern `\\S`), and checked so by the route rather than by the validator: on
 * a string of megabytes the validator counts every code point for `minLength` and scans every
 * leading blank for `\\S`, in one go on the event loop (some 200 ms for 8 MiB), where the route
 * checks `hash` after its size, and `hashes` while reading their lines in slices (batch.ts).
 */
const NOT_BLANK = { minLength: 1, pattern: '\\S' }

const HashText = documentedAs(Type.String({ description: `Not empty or only white space (either is 400). A hash, a user:hash / shadow / htpasswd / pwdump line, or a 0x-prefixed hex string, as pasted (quotes, bullets, a trailing comma… are removed); at most ${MAX_IDENTIFY_BYTES} bytes` }), NOT_BLANK)

const HashList = Type.Array(documentedAs(Type.String({ description: 'A hash or line as for `hash`, or a whole file of them (one per line)' }), NOT_BLANK), { minItems: 1, maxItems: MAX_IDENTIFY_BATCH })

const tooLong = (pointer: string) => problems.tooLarge(`${pointer} is longer than ${MAX_IDENTIFY_BYTES} bytes; no hash format is that long`)

function checkSize(hash: string, pointer: string): void {
  if (hash.length * 3 > MAX_IDENTIFY_BYTES && Buffer.byteLength(hash) > MAX_IDENTIFY_BYTES) throw tooLong(pointer)
}

/** The 400 the validator gave for an empty or blank string, as it worded it. */
function blank(texts: ReadonlyArray<{ pointer: string, text: string }>): Problem {
  const errors = texts.flatMap(({ pointer, text }) => [
    ...(text === '' ? [{ pointer, message: 'must NOT have fewer than 1 characters' }] : []),
    { pointer, message: 'must match pattern "\\S"' },
  ])
  return problems.validation(`The request does not match the schema: ${errors.map((issue) => `${issue.pointer} ${issue.message}`).join('; ')}`.slice(0, 500), errors)
}

const FormatInfo = Type.Object({
  name: Type.String({ description: 'The `algorithm` a match of this format reports' }),
  displayName: Type.String(),
  category: Type.String(),
  hashcat: Type.Union([Type.Integer(), Type.Null()], { description: 'hashcat mode (-m)' }),
  john: Type.Union([Type.String(), Type.Null()], { description: 'John the Ripper --format' }),
  variants: Type.Optional(Type.Array(Type.Object({ hashcat: Type.Integer(), displayName: Type.String() }), { description: 'Other hashcat modes that read the same syntax' })),
  format: Type.Optional(Type.String({ description: 'The text form around the digest (base64, sri, oci-digest…), as in a match' })),
  description: Type.String(),
  syntax: Type.String({ description: 'The syntax in words, read from the pattern the engine matches: literals in backticks, then each field with its alphabet, length and name' }),
  example: Type.Union([Type.String(), Type.Null()], { description: 'A string POST /api/identify lists this format for (generated from the pattern, or a published example where the format needs one)' }),
  verifiable: Type.Boolean({ description: 'POST /api/verify accepts strings of this format' }),
  verifyAlgorithm: Type.Optional(Type.String({ description: 'The `algorithm` to give POST /api/verify' })),
  popular: Type.Boolean({ description: `Kept by \`popular: true\` (a prior of ${POPULAR_PRIOR} or more)` }),
})

export const identifyRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  /** What /api/verify here would need, so that `verifiable` says whether it would verify (the keys as they are now). */
  const verifier = (): IdentifyOptions['verifier'] => ({ caps: config.caps, keys: { pepper: app.passwords.keyring?.ids ?? [] } })

  app.get('/api/identify/formats', {
    schema: {
      tags: ['identify'],
      summary: 'Every hash format /api/identify knows: name, hashcat mode, John format, an example and the syntax in words',
      description: 'The list is versioned: `version` (also the ETag) changes whenever the identify table does, so a client can cache it.',
      response: {
        200: Type.Object({
          version: Type.String({ description: 'A digest of the list: equal versions, equal lists' }),
          count: Type.Integer(),
          formats: Type.Array(FormatInfo),
        }),
        429: errorResponses[429],
        503: errorResponses[503],
      },
    },
  }, async (_request, reply) => {
    const list = await catalog()
    void reply.header('etag', `"${list.version}"`)
    return list
  })

  app.post('/api/identify', {
    config: { accepts: 'application/json' },
    bodyLimit: IDENTIFY_BODY_LIMIT,
    schema: {
      tags: ['identify'],
      summary: 'The likely formats of a hash string, or of every line of a pasted file, ranked by confidence',
      description: `Send exactly one of \`hash\` (one string) or \`hashes\` (strings answered in order as \`results\`, with a \`summary\`). `
        + `A string of \`hashes\` with line breaks is a whole file (potfile, --username list, pwdump/secretsdump output, Responder captures, Kerberoast output), read line by line; `
        + `at most ${MAX_IDENTIFY_ENTRIES} entries in all, ${MAX_IDENTIFY_BYTES} bytes per line and ${IDENTIFY_BODY_LIMIT / 1024 / 1024} MiB per request (413 beyond).`,
      body: Type.Object({
        hash: Type.Optional(HashText),
        hashes: Type.Optional(HashList),
        popular: Type.Optional(Type.Boolean({ default: false, description: `Keep only the common formats (a prior of ${POPULAR_PRIOR} or more in the identify table: the raw digests, crypt schemes and Windows, web and database formats people meet); confidences are those of the full ranking` })),
        top: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `With \`hashes\`: at most this many matches per result. A response lists at most ${MAX_RESPONSE_MATCHES} matches in all in any case (3 per result for 10,000 lines); \`omitted\` counts those left out` })),
        potfile: Type.Optional(Type.Boolean({ default: false, description: 'Every line is a hashcat potfile line `hash:plain`: the plaintext after the last colon is dropped before identifying and never returned. Lines ending in `:$HEX[…]` are read so without it. '
          + 'Without it, a line is read as it stands (`hash:plain` is also `hash:salt`), and whatever a reading takes from the text after the last colon is left out of `params` and named in `withheld`: a plaintext is never sent back either way' })),
        // Exactly one of hash and hashes: oneOf of two `required`s beside the properties, which JSON
        // Schema can state and a generated client can type.
      }, { additionalProperties: false, oneOf: [{ properties: { hash: HashText }, required: ['hash'] }, { properties: { hashes: HashList }, required: ['hashes'] }] }),
      response: {
        200: Type.Union([Identification, Batch]),
        ...errorResponsesWith({ 400: 'neither or both of hash and hashes; an empty or white-space-only string' }),
      },
    },
    preValidation: async (request) => {
      const body = request.body as { hash?: unknown, hashes?: unknown } | undefined
      if (typeof body?.hash === 'string') {
        checkSize(body.hash, 'hash')
        if (!/\S/.test(body.hash)) throw blank([{ pointer: '/body/hash', text: body.hash }])
      }
      // `hashes` is read in the handler, in slices: its blank strings and long lines are refused there.
    },
  }, async (request, reply) => {
    const { hash, hashes, popular, potfile, top } = request.body
    if ((hash === undefined) === (hashes === undefined)) {
      throw problems.validation('send exactly one of hash or hashes', [{ pointer: '/body', message: 'exactly one of hash, hashes' }])
    }
    const options = { popular: popular === true, verifier: verifier() }
    if (hashes === undefined) {
      if (!potfile) return identify(hash!, options)
      // One potfile line: the same reading as in a file, without its item and line.
      return identifyEntry({ text: hash! }, { ...options, potfile: true }, MAX_RESPONSE_MATCHES)
    }
    const read = await readEntries(hashes, MAX_IDENTIFY_BYTES)
    if ('blank' in read) throw blank(read.blank.map((index) => ({ pointer: `/body/hashes/${index}`, text: hashes[index]! })))
    if ('tooLong' in read) throw tooLong(`hashes[${read.tooLong.item}]${read.tooLong.line === undefined ? '' : ` line ${read.tooLong.line}`}`)
    if ('tooMany' in read) throw problems.tooLarge(`hashes hold more than ${MAX_IDENTIFY_ENTRIES} lines; send at most ${MAX_IDENTIFY_ENTRIES} per request`)
    const batch = await identifyBatch(read.entries, read.skipped, { ...options, potfile: potfile === true, ...(top === undefined ? {} : { top }) })
    // Streamed in the pieces the batch wrote its results into (batch.ts): the text the schema describes.
    // (The typed reply takes schema-shaped objects; a stream of that JSON is cast to it.)
    // Its memory goes back to the batches once the answer is handed to the OS ('finish'); an
    // answer cut short ('close' first) leaves its pieces to the collector.
    reply.raw.once('finish', batch.release)
    return reply.type('application/json; charset=utf-8').send(Readable.from(batchJson(batch)) as never)
  })
}

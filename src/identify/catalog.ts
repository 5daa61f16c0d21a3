/**
 * The catalogue of every format the identify table knows, for GET /api/identify/formats: name,
 * hashcat mode, John format, an example and the syntax in words, under a version that changes
 * whenever the table does.
 *
 * Examples and words are derived from each row's pattern, which is the one statement of the
 * syntax (formats.ts), so they cannot drift from what the engine matches:
 * - the example is a string the pattern generates from a fixed pseudo-random stream (seeded by the
 *   row), kept only when the row's own regex and parser accept it and the engine lists the row
 *   for it; a row whose parser needs more than its pattern says (a JWT's JSON header) carries an
 *   `example` of its own in formats.ts;
 * - the words read the pattern's pieces in order (`$2`, one of a b x y, `$`, 2 digits (cost)…).
 */
import { createHash } from 'node:crypto'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { identify } from './engine.js'
import { POPULAR_PRIOR } from './ranking.js'
import { formats } from './table.js'
import type { HashcatVariant, HashFormat } from './types.js'

export interface CatalogEntry {
  name: string
  displayName: string
  category: string
  hashcat: number | null
  john: string | null
  variants?: HashcatVariant[]
  format?: string
  description: string
  syntax: string
  example: string | null
  verifiable: boolean
  verifyAlgorithm?: string
  popular: boolean
}

export interface Catalog {
  version: string
  count: number
  formats: CatalogEntry[]
}

// ---- A small reader of the table's regex dialect (bounded quantifiers, classes, groups; pattern.ts) ----

type Node =
  | { type: 'literal', text: string }
  | { type: 'class', chars: string[], label: string }
  | { type: 'group', name?: string, branches: Node[][] }
  | { type: 'repeat', node: Node, min: number, max: number }

const PRINTABLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, index) => String.fromCharCode(0x21 + index))
const ESCAPES: Record<string, string[]> = {
  d: PRINTABLE.filter((char) => /\d/.test(char)),
  w: PRINTABLE.filter((char) => /\w/.test(char)),
  s: [' '],
  n: ['\n'],
  t: ['\t'],
}
const NEGATED_ESCAPES: Record<string, (char: string) => boolean> = { D: (char) => !/\d/.test(char), W: (char) => !/\w/.test(char), S: (char) => !/\s/.test(char) }

/** Names for the alphabets the table uses, as people know them. */
const CLASS_NAMES: Record<string, string> = {
  '[0-9a-fA-F]': 'hex digit', '[0-9A-F]': 'uppercase hex digit', '[0-9a-f]': 'lowercase hex digit', '\\d': 'digit', '[0-9]': 'digit',
  '[A-Za-z0-9+/]': 'base64 character', '[A-Za-z0-9_-]': 'base64url character', '[./0-9A-Za-z]': 'crypt64 character (./0-9A-Za-z)',
  '[./A-Za-z0-9]': 'crypt64 character (./A-Za-z0-9)', '[!-~]': 'printable character', '[A-Za-z0-9]': 'letter or digit',
  '[0-9a-df-np-sv-z]': 'Nix base32 character', '[1-9A-HJ-NP-Za-km-z]': 'base58 character', '[A-Za-z]': 'letter',
}

function parse(source: string): Node[] {
  let position = 0
  const alternation = (): Node[][] => {
    const branches = [sequence()]
    while (source[position] === '|') {
      position += 1
      branches.push(sequence())
    }
    return branches
  }
  const sequence = (): Node[] => {
    const nodes: Node[] = []
    while (position < source.length && source[position] !== '|' && source[position] !== ')') {
      let node = atom()
      const char = source[position]
      if (char === '?') {
        position += 1
        node = { type: 'repeat', node, min: 0, max: 1 }
      } else if (char === '{') {
        const close = source.indexOf('}', position)
        const [low, high] = source.slice(position + 1, close).split(',')
        node = { type: 'repeat', node, min: Number(low), max: high === undefined ? Number(low) : Number(high) }
        position = close + 1
      }
      const previous = nodes[nodes.length - 1]
      if (node.type === 'literal' && previous?.type === 'literal') previous.text += node.text
      else nodes.push(node)
    }
    return nodes
  }
  const atom = (): Node => {
    const char = source[position]!
    if (char === '(') {
      position += 1
      let name: string | undefined
      if (source[position] === '?') {
        position += 1
        if (source[position] === ':') position += 1
        else {
          const close = source.indexOf('>', position)
          name = source.slice(position + 1, close)
          position = close + 1
        }
      }
      const branches = alternation()
      position += 1 // ')'
      return { type: 'group', ...(name === undefined ? {} : { name }), branches }
    }
    if (char === '[') {
      const start = position
      position += 1
      const negated = source[position] === '^'
      if (negated) position += 1
      const members: Array<(candidate: string) => boolean> = []
      while (source[position] !== ']' || position === start + (negated ? 2 : 1)) {
        let first = source[position]!
        if (first === '\\') {
          const escaped = source[position + 1]!
          position += 2
          if (ESCAPES[escaped]) {
            const set = ESCAPES[escaped]!
            members.push((candidate) => set.includes(candidate))
            continue
          }
          if (NEGATED_ESCAPES[escaped]) {
            members.push(NEGATED_ESCAPES[escaped]!)
            continue
          }
          first = escaped
        } else position += 1
        if (source[position] === '-' && source[position + 1] !== ']') {
          let last = source[position + 1]!
          position += 2
          if (last === '\\') {
            last = source[position]!
            position += 1
          }
          const [low, high] = [first.charCodeAt(0), last.charCodeAt(0)]
          members.push((candidate) => candidate.charCodeAt(0) >= low && candidate.charCodeAt(0) <= high)
        } else {
          const literal = first
          members.push((candidate) => candidate === literal)
        }
      }
      position += 1 // ']'
      const label = source.slice(start, position)
      const inClass = (candidate: string): boolean => members.some((member) => member(candidate))
      return { type: 'class', chars: PRINTABLE.filter((candidate) => inClass(candidate) !== negated), label }
    }
    if (char === '\\') {
      const escaped = source[position + 1]!
      position += 2
      if (ESCAPES[escaped]) return { type: 'class', chars: ESCAPES[escaped]!, label: `\\${escaped}` }
      if (NEGATED_ESCAPES[escaped]) return { type: 'class', chars: PRINTABLE.filter(NEGATED_ESCAPES[escaped]!), label: `\\${escaped}` }
      return { type: 'literal', text: escaped }
    }
    position += 1
    if (char === '.') return { type: 'class', chars: PRINTABLE, label: '.' }
    return { type: 'literal', text: char }
  }
  const branches = alternation()
  return branches.length === 1 ? branches[0]! : [{ type: 'group', branches }]
}

// ---- Examples ----

/** A deterministic stream of bytes from SHA-256 in counter mode, seeded by the row and attempt. */
function stream(seed: string): () => number {
  let block = Buffer.alloc(0)
  let used = 0
  let counter = 0
  return () => {
    if (used >= block.length) {
      block = createHash('sha256').update(`${seed}/${counter}`).digest()
      counter += 1
      used = 0
    }
    const value = block[used]!
    used += 1
    return value
  }
}

const LOWER_HEX = [...'0123456789abcdef']

/** How many repetitions an example uses: the minimum, raised to a typical size where the range allows. */
function repetitions(min: number, max: number, next: () => number, attempt: number): number {
  if (min === max) return min
  if (attempt % 3 === 2) return min + (next() % (Math.min(max, min + 16) - min + 1))
  const typical = Math.max(min, Math.min(max, min === 0 ? 8 : min))
  return typical
}

function generate(nodes: readonly Node[], next: () => number, attempt: number): string {
  let text = ''
  for (const node of nodes) {
    switch (node.type) {
      case 'literal': text += node.text; break
      case 'class': {
        // Hex of either case is written lowercase, as nearly every tool prints it.
        const chars = node.label === '[0-9a-fA-F]' ? LOWER_HEX : node.chars
        text += chars[next() % chars.length] ?? ''
        break
      }
      case 'group': text += generate(node.branches[next() % node.branches.length]!, next, attempt); break
      case 'repeat': {
        const count = repetitions(node.min, node.max, next, attempt)
        for (let index = 0; index < count; index += 1) text += generate([node.node], next, attempt)
      }
    }
  }
  return text
}

const sameRow = (format: HashFormat) => (match: { algorithm: string, hashcat: number | null, displayName: string, format?: string }): boolean =>
  match.algorithm === format.name && match.hashcat === format.hashcat && match.displayName === format.displayName && match.format === format.format

/** An example the engine lists this row for, or null when 256 attempts find none. */
function exampleOf(format: HashFormat, nodes: readonly Node[]): string | null {
  const accepted = (text: string): boolean => identify(text).matches.some(sameRow(format))
  if (format.example !== undefined) return accepted(format.example) ? format.example : null
  for (let attempt = 0; attempt < 256; attempt += 1) {
    const text = generate(nodes, stream(`${format.name}/${format.hashcat}/${format.displayName}/${attempt}`), attempt)
    const match = format.regex.exec(text)
    if (match === null) continue
    if (format.parse && format.parse(text, match.groups ?? {}) === null) continue
    if (accepted(text)) return text
  }
  return null
}

// ---- Words ----

const plural = (noun: string, count: string): string => (count === '1' ? noun : noun.replace(/\b(digit|character|letter)\b/g, '$1s'))

function classWords(label: string, chars: readonly string[]): string {
  const named = CLASS_NAMES[label]
  if (named !== undefined) return named
  if (chars.length <= 8) return `one of ${chars.map((char) => `\`${char}\``).join(' ')}`
  if (label.startsWith('[^')) return `character other than ${label.slice(2, -1).replace('\\s', 'whitespace').replace('\\n', 'newline')}`
  return `character of ${label}`
}

function describeNodes(nodes: readonly Node[]): string {
  return nodes.map(describeNode).join(', ')
}

function describeNode(node: Node): string {
  switch (node.type) {
    case 'literal': return `\`${node.text}\``
    case 'class': return classWords(node.label, node.chars)
    case 'group': {
      const inner = node.branches.length === 1 ? describeNodes(node.branches[0]!) : `either ${node.branches.map((branch) => branch.length === 0 ? 'nothing' : describeNodes(branch)).join(' or ')}`
      return node.name === undefined ? inner : `${inner} (${node.name})`
    }
    case 'repeat': {
      if (node.min === 0 && node.max === 1) return `optionally [${describeNode(node.node)}]`
      const count = node.min === node.max ? `${node.min}` : `${node.min} to ${node.max}`
      if (node.node.type === 'class') return `${count} ${plural(classWords(node.node.label, node.node.chars), count)}`
      if (node.node.type === 'literal') return `${count} × \`${node.node.text}\``
      return `${count} × [${describeNode(node.node)}]`
    }
  }
}

// ---- The catalogue ----

function entryOf(format: HashFormat): CatalogEntry {
  const nodes = parse(format.pattern)
  const entry: CatalogEntry = {
    name: format.name,
    displayName: format.displayName,
    category: format.category,
    hashcat: format.hashcat,
    john: format.john,
    description: format.description,
    syntax: describeNodes(nodes),
    example: exampleOf(format, nodes),
    verifiable: format.verifiable,
    popular: format.prior >= POPULAR_PRIOR,
  }
  if (format.variants) entry.variants = format.variants
  if (format.format !== undefined) entry.format = format.format
  // A sealed row (`$pepper$`) verifies as the scheme inside, which each string names.
  if (format.verifiable && format.registered) entry.verifyAlgorithm = format.registered.name
  return entry
}

let built: Promise<Catalog> | undefined

/**
 * Built on first use and kept (the table does not change while the server runs). Building
 * identifies every example, a few hundred milliseconds in all, so it yields to the event loop
 * between rows rather than stalling the requests in flight.
 */
export function catalog(): Promise<Catalog> {
  built ??= (async () => {
    const entries: CatalogEntry[] = []
    for (const format of formats) {
      entries.push(entryOf(format))
      await nextTurn()
    }
    const version = createHash('sha256').update(JSON.stringify(entries)).digest('hex').slice(0, 16)
    return { version, count: entries.length, formats: entries }
  })()
  return built
}

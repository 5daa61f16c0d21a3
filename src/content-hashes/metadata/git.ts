/**
 * Git: `git ls-tree` lines, `<mode> SP <type> SP <object> TAB <path>`, and with `-l` (`--long`)
 * the object's size before the tab, padded with spaces (`-` for a tree); `-z` ends them with NUL
 * instead of a newline (git-ls-tree(1), "Output format"). A blob's id is the SHA-1 (40 hex digits)
 * or, in a repository made with `--object-format=sha256`, the SHA-256 (64) of `blob <size>\0` and
 * the content. A tree or a submodule's commit is no file's content: those lines cannot be checked.
 *
 * Each line is one field, named by its path as ls-tree prints it (quoted, when git quotes it).
 * The lines are split by hand, with no pattern over a whole line.
 */
import { invalidMetadata } from './problems.js'
import type { ExpectedField, MetadataShape } from './types.js'

const MODE = /^[0-7]{6}$/
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/
const SIZE = /^[0-9]{1,16}$/
const TYPES = new Set(['blob', 'tree', 'commit'])
/** Git's paths are at most PATH_MAX (4096) on Linux; a field name longer than that is no path. */
const MAX_PATH_CHARS = 4096

interface TreeLine {
  type: string
  objectId: string
  size: number | undefined
  path: string
}

/** One ls-tree line, or null when it is not one. */
function parseLine(line: string): TreeLine | null {
  const tab = line.indexOf('\t')
  if (tab === -1 || tab > 128) return null
  const head = line.slice(0, tab).split(' ').filter((word) => word !== '')
  const [mode, type, objectId, size] = head
  if (head.length < 3 || head.length > 4 || !MODE.test(mode as string) || !TYPES.has(type as string) || !OBJECT_ID.test(objectId as string)) return null
  if (size !== undefined && size !== '-' && !SIZE.test(size)) return null
  const path = line.slice(tab + 1)
  if (path === '' || path.length > MAX_PATH_CHARS) return null
  return { type: type as string, objectId: objectId as string, size: size === undefined || size === '-' ? undefined : Number(size), path }
}

const lines = (text: string): string[] => text.split(/[\n\0]/).map((line) => line.endsWith('\r') ? line.slice(0, -1) : line).filter((line) => line !== '')

export const gitLsTreeMetadata: MetadataShape = {
  name: 'git-ls-tree',
  accepts: 'git ls-tree lines (<mode> blob <object id>\\t<path>, with or without -l)',
  matches: ({ text, json }) => json === undefined && text !== null && parseLine(lines(text.slice(0, 8192))[0] ?? '') !== null,
  read: ({ text }) => {
    const fields: ExpectedField[] = []
    for (const [index, line] of lines(text ?? '').entries()) {
      const parsed = parseLine(line)
      if (parsed === null) throw invalidMetadata(`line ${index + 1}`, 'is not a git ls-tree line (<mode> <type> <object id>[ <size>]\\t<path>)')
      const contentHash = parsed.objectId.length === 40 ? 'git-blob-sha1' : 'git-blob-sha256'
      fields.push({
        field: parsed.path,
        contentHash,
        parameters: parsed.size === undefined ? {} : { size: parsed.size },
        expected: parsed.objectId,
        ...(parsed.type === 'blob' ? {} : { cannotCheck: `a ${parsed.type} is ${parsed.type === 'tree' ? 'a directory' : 'a submodule'}, not a file's content` }),
      })
    }
    return { shape: 'git-ls-tree', fields }
  },
}

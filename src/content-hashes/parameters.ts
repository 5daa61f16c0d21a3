/**
 * Parameter validation for the content-hash registry: defaults, bounds, and one problem naming the
 * field for anything out of range, so a bad part size is a 422 that says `partSize` and never a
 * 5xx from deep inside a hasher.
 */
import { problems } from '../problem.js'
import type { ContentHash, ParameterSpec, RawParameters, ResolvedParameters } from './types.js'

export const KiB = 1024
export const MiB = 1024 * KiB
export const GiB = 1024 * MiB

const UNITS: Record<string, number> = { b: 1, kib: KiB, mib: MiB, gib: GiB }

/**
 * A 422 naming the parameter. `pointer` is where the parameter sits in the request: the issue puts
 * content-hash parameters in the query string.
 */
export function invalidParameter(name: string, detail: string, pointerBase = '/query') {
  return problems.unprocessable('invalid-parameter', 'Invalid parameter', detail, {
    errors: [{ pointer: `${pointerBase}/${name}`, message: detail }],
    parameter: name,
  })
}

/**
 * `8388608`, `8MiB`, `8 MiB` or `16KiB` (one space at most before the unit) as a number of bytes; null when it is none of these. Only
 * binary units: `8MB` could mean 8,000,000 or 8,388,608 bytes, and S3 tools disagree about it.
 */
export function parseByteSize(value: string | number): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null
  // Trimmed first, so that no two runs of spaces meet in the pattern (which would backtrack quadratically).
  const match = /^(\d{1,16})\s?([a-z]*)$/i.exec(value.trim())
  if (!match) return null
  const unit = UNITS[(match[2] || 'b').toLowerCase()]
  if (unit === undefined) return null
  const bytes = Number(match[1]) * unit
  return Number.isSafeInteger(bytes) ? bytes : null
}

/** `8 MiB` for 8388608, `5000 bytes` for 5000: bounds in messages read as people write them. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [['GiB', GiB], ['MiB', MiB], ['KiB', KiB]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`
  }
  return `${bytes} bytes`
}

function resolveOne(name: string, spec: ParameterSpec, raw: string | number | undefined, pointerBase: string): string | number | undefined {
  if (raw === undefined || raw === '') {
    if (spec.default !== undefined) return spec.default
    if (spec.kind === 'bytes' && !spec.optional) throw invalidParameter(name, `${name} is required here: ${spec.description}`, pointerBase)
    if (spec.kind === 'text' && spec.minBytes > 0) throw invalidParameter(name, `${name} is required here: ${spec.description}`, pointerBase)
    return undefined
  }
  switch (spec.kind) {
    case 'bytes': {
      const bytes = parseByteSize(raw)
      if (bytes === null) throw invalidParameter(name, `${name} must be a whole number of bytes, or one with KiB, MiB or GiB`, pointerBase)
      if (bytes < spec.min) throw invalidParameter(name, `${name} must be at least ${formatBytes(spec.min)}`, pointerBase)
      if (bytes > spec.max) throw invalidParameter(name, `${name} must be at most ${formatBytes(spec.max)}`, pointerBase)
      return bytes
    }
    case 'choice': {
      const value = String(raw)
      const found = spec.values.find((candidate) => candidate.toLowerCase() === value.toLowerCase())
      if (found === undefined) throw invalidParameter(name, `${name} must be one of ${spec.values.join(', ')}`, pointerBase)
      return found
    }
    case 'text': {
      const value = String(raw)
      const bytes = Buffer.byteLength(value, 'utf8')
      if (bytes < spec.minBytes || bytes > spec.maxBytes) {
        throw invalidParameter(name, `${name} must be ${spec.minBytes} to ${spec.maxBytes} bytes of UTF-8`, pointerBase)
      }
      for (const { pattern, reason } of spec.forbidden ?? []) {
        if (pattern.test(value)) throw invalidParameter(name, `${name} ${reason}`, pointerBase)
      }
      return value
    }
  }
}

/**
 * The entry's parameters with defaults filled in and every bound checked. Parameters the entry
 * does not take are refused, so a misspelt `partsize` is not silently ignored.
 */
export function resolveParameters(entry: ContentHash, raw: RawParameters = {}, pointerBase = '/query'): ResolvedParameters {
  for (const name of Object.keys(raw)) {
    if (raw[name] !== undefined && !Object.hasOwn(entry.parameters, name)) {
      const known = Object.keys(entry.parameters)
      throw invalidParameter(name, `${entry.name} takes no parameter ${name.slice(0, 64)}${known.length ? `; it takes ${known.join(', ')}` : ''}`, pointerBase)
    }
  }
  const resolved: Record<string, string | number | undefined> = {}
  for (const [name, spec] of Object.entries(entry.parameters)) {
    resolved[name] = resolveOne(name, spec, raw[name], pointerBase)
  }
  return resolved
}

/** A resolved byte-size parameter, for the `create` functions (resolveParameters checked it). */
export function bytesParameter(params: ResolvedParameters, name: string): number {
  const value = params[name]
  if (typeof value !== 'number') throw new Error(`content hash parameter ${name} was not resolved`)
  return value
}

export function optionalBytesParameter(params: ResolvedParameters, name: string): number | undefined {
  const value = params[name]
  return typeof value === 'number' ? value : undefined
}

export function textParameter(params: ResolvedParameters, name: string): string | undefined {
  const value = params[name]
  return typeof value === 'string' ? value : undefined
}

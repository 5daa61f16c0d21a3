/**
 * The algorithm catalogue from GET /api/algorithms, fetched once and shared by every tab, and
 * the search the pickers use: by canonical name, display name or alias, ignoring case and
 * punctuation, the way the server itself resolves names ("SHA-256" = "sha256").
 */
import { useEffect, useState } from 'preact/hooks'
import { api } from './api'

export interface OptionInfo { default: number, min: number, max: number, description: string }

export interface AlgorithmInfo {
  name: string
  displayName: string
  aliases: string[]
  kind: 'digest' | 'xof' | 'checksum' | 'similarity' | 'password'
  family?: string
  outputBits: number | null
  operations: string[]
  options: Record<string, OptionInfo>
}

export const KIND_LABELS: Record<AlgorithmInfo['kind'], string> = {
  digest: 'Digests',
  xof: 'Extendable-output functions',
  checksum: 'Checksums',
  similarity: 'Similarity hashes',
  password: 'Password hashes',
}

let loading: Promise<AlgorithmInfo[]> | null = null

export function loadAlgorithms(): Promise<AlgorithmInfo[]> {
  loading ??= api<{ algorithms: AlgorithmInfo[] }>('/api/algorithms')
    .then((answer) => { performance.mark('hashd:algorithms'); return answer.algorithms })
    .catch((error: unknown) => { loading = null; throw error })
  return loading
}

/** The catalogue as component state: null while loading (the forms wait), empty with an error message if it failed. */
export function useAlgorithms(): { algorithms: AlgorithmInfo[] | null, error: string | null } {
  const [algorithms, setAlgorithms] = useState<AlgorithmInfo[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    loadAlgorithms().then(setAlgorithms, (failure: unknown) => {
      setError(`Could not load the algorithm list: ${(failure as Error).message}`)
      // Not loading any more: the forms work with the names they hold (the server checks them).
      setAlgorithms([])
    })
  }, [])
  return { algorithms, error }
}

export const normalize = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '')

export function matchesQuery(algorithm: AlgorithmInfo, query: string): boolean {
  const wanted = normalize(query)
  if (wanted === '') return true
  return [algorithm.name, algorithm.displayName, ...algorithm.aliases].some((name) => normalize(name).includes(wanted))
}

/** The algorithm a typed name stands for exactly (canonical name, display name or alias), if any. */
export function resolveName(list: AlgorithmInfo[], query: string): AlgorithmInfo | undefined {
  const wanted = normalize(query)
  if (wanted === '') return undefined
  return list.find((algorithm) => [algorithm.name, algorithm.displayName, ...algorithm.aliases].some((name) => normalize(name) === wanted))
}

/**
 * The Prometheus text exposition format read back, for tests that count what the server did
 * through GET /metrics (a counter of bytes hashed, of refusals) rather than by timing it.
 */
import assert from 'node:assert/strict'

export interface Sample { name: string, labels: Record<string, string>, value: number }

/** One sample per line that is not a comment. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    assert.ok(match, `not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[name as string] = value as string
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) })
  }
  return samples
}

/** The value of the one sample with this name and exactly these labels (0 when absent). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name &&
    Object.keys(sample.labels).length === Object.keys(labels).length &&
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} appears ${found.length} times`)
  return found[0]?.value ?? 0
}

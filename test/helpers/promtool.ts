/**
 * `promtool check metrics` from Debian's prometheus package: the exposition format's parser and
 * linter, as Prometheus itself reads a scrape. Call only from tests guarded by skipUnless('promtool').
 */
import { spawnSync } from 'node:child_process'

/** promtool's verdict on a scrape: exit status 0 and nothing to say, or what it complained about. */
export function promtoolCheckMetrics(text: string): { ok: boolean, output: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
  if (result.error) throw result.error
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`.trim() }
}

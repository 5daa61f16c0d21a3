/**
 * The audit log's crash test, shared by the file-key and the token-key suites: a burst of 200 keyed
 * HMAC requests, hashd killed with SIGKILL once 20 have been answered, and the request ids of those
 * answered, which the log must all hold.
 */
import type { HashdProcess } from './process.js'

export async function killInMidBurst(hashd: HashdProcess, keyName: string): Promise<string[]> {
  const answered: string[] = []
  const burst = Array.from({ length: 200 }, async (_, i) => {
    try {
      const response = await hashd.fetch('/api/hmac', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: `m${i}`, keyName }) })
      await response.text()
      if (response.status === 200) answered.push(response.headers.get('x-request-id')!)
    } catch { /* killed in flight */ }
  })
  while (answered.length < 20) await new Promise((resolve) => setTimeout(resolve, 5))
  hashd.child.kill('SIGKILL')
  await Promise.all(burst)
  await hashd.exited
  return answered
}

/**
 * A node:test reporter for scripts/test.ts: one JSON line per finished test (`pass`, `fail`,
 * `skip`, `todo`, `cancelled`) or suite (`suite`) and nothing else, written beside the human-readable spec output.
 * The closing counts are read from these events, not from the spec reporter's text, whose summary
 * moves away from the end when failures are printed after it.
 */
interface TestEventData {
  name?: string
  nesting?: number
  skip?: boolean | string
  todo?: boolean | string
  details?: { type?: string, error?: { failureType?: string } }
  file?: string
}

export default async function* counter(source: AsyncIterable<{ type: string, data: TestEventData }>): AsyncGenerator<string> {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const data = event.data
    // Suites (describe) are containers: counted apart, as the spec reporter's `ℹ suites` line does.
    if (data.details?.type === 'suite') {
      yield `${JSON.stringify({ outcome: 'suite', name: data.name, file: data.file })}\n`
      continue
    }
    const outcome = event.type === 'test:fail'
      ? (data.details?.error?.failureType === 'cancelledByParent' ? 'cancelled' : 'fail')
      : data.skip !== undefined && data.skip !== false ? 'skip' : data.todo !== undefined && data.todo !== false ? 'todo' : 'pass'
    yield `${JSON.stringify({ outcome, name: data.name, file: data.file })}\n`
  }
}

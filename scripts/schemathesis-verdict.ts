/**
 * The verdict on one Schemathesis pass (scripts/schemathesis.sh): reads its NDJSON report and the
 * document it was run against, prints every failure, and exits 1 unless each one is excused.
 *
 * `node dist/scripts/schemathesis-verdict.js REPORT.ndjson OPENAPI.json [ST_EXIT_STATUS]`
 *
 * Only `positive_data_acceptance` can be excused (a request the document allows, answered 4xx), and
 * only by a rule in RUN_TIME_RULES: the operation, the status, the problem type and, for a
 * validation problem, the field it points at; and only while the operation's description (or the
 * description of that status) in the served document states the rule, so an excuse cannot outlive
 * its documentation. Every other failed check, and every error of Schemathesis's engine (a
 * connection reset, a timeout, an internal error), fails the pass.
 */
import { createReadStream, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'

/** A rule the server checks at run time and the schema cannot state; its description says so. */
interface RunTimeRule {
  operation: string
  status: number
  type: string
  /** For urn:hashd:problem:validation: the pointer of every field at fault (a trailing `*` matches any rest). */
  pointer?: string
  /** Text the operation's description (or its status's) must contain: where the document states the rule. */
  stated: string
  why: string
}

const RUN_TIME_RULES: readonly RunTimeRule[] = [
]

interface Check { name: string, status: string, failure_info?: { failure?: { type?: string, message?: string } } }
interface Body { $base64?: string, string?: string }
interface Interaction {
  request?: { method?: string, uri?: string, body?: Body | null }
  response?: { status_code?: number, content?: Body | null } | null
}
interface Recorder { label?: string, checks?: Record<string, Check[]>, interactions?: Record<string, Interaction> }
interface ProblemBody { type?: unknown, errors?: Array<{ pointer?: unknown }> }

interface Finding { key: string, text: string, excusedBy?: RunTimeRule }

function decode(body: Body | null | undefined): string {
  if (!body) return ''
  if (typeof body.$base64 === 'string') return Buffer.from(body.$base64, 'base64').toString('utf8')
  return typeof body.string === 'string' ? body.string : ''
}

function parseProblem(text: string): ProblemBody | undefined {
  try {
    const parsed = JSON.parse(text) as unknown
    return parsed !== null && typeof parsed === 'object' ? parsed as ProblemBody : undefined
  } catch {
    return undefined
  }
}

type Operations = Map<string, string>

/** `POST /api/hash` → the operation's description and its responses' descriptions, as one text. */
function operationTexts(document: { paths?: Record<string, Record<string, { description?: string, summary?: string, responses?: Record<string, { description?: string }> }>> }): Operations {
  const texts: Operations = new Map()
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      const responses = Object.entries(operation.responses ?? {}).map(([status, response]) => `${status}: ${response.description ?? ''}`)
      texts.set(`${method.toUpperCase()} ${path}`, [operation.summary ?? '', operation.description ?? '', ...responses].join('\n'))
    }
  }
  return texts
}

function pointerMatches(pattern: string, pointer: string): boolean {
  return pattern.endsWith('*') ? pointer.startsWith(pattern.slice(0, -1)) : pointer === pattern
}

/** The rule that excuses this rejected positive case, if any. */
function excuse(operation: string, status: number | undefined, body: string, operations: Operations, rules = RUN_TIME_RULES): RunTimeRule | undefined {
  const problem = parseProblem(body)
  if (status === undefined || problem === undefined || typeof problem.type !== 'string') return undefined
  const pointers = (problem.errors ?? []).map((error) => String(error.pointer))
  return rules.find((rule) => rule.operation === operation && rule.status === status && rule.type === problem.type
    && (rule.pointer === undefined || (pointers.length > 0 && pointers.every((pointer) => pointerMatches(rule.pointer as string, pointer))))
    && (operations.get(operation) ?? '').includes(rule.stated))
}

async function main(): Promise<number> {
  const [reportPath, documentPath, stStatusText = '0'] = process.argv.slice(2)
  if (reportPath === undefined || documentPath === undefined) {
    process.stderr.write('usage: schemathesis-verdict REPORT.ndjson OPENAPI.json [ST_EXIT_STATUS]\n')
    return 2
  }
  const operations = operationTexts(JSON.parse(readFileSync(documentPath, 'utf8')) as Parameters<typeof operationTexts>[0])
  const findings = new Map<string, Finding>()
  const add = (finding: Finding) => { if (!findings.has(finding.key)) findings.set(finding.key, finding) }
  let finished = false
  let seed: unknown

  const lines = createInterface({ input: createReadStream(reportPath, 'utf8'), crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    const event = JSON.parse(line) as Record<string, Record<string, unknown>>
    const [kind = '', value = {}] = Object.entries(event)[0] ?? []
    if (kind === 'Initialize') seed = value.seed
    if (kind === 'ScenarioFinished' || kind === 'FuzzScenarioFinished') {
      const recorder = value.recorder as Recorder | undefined
      for (const [caseId, checks] of Object.entries(recorder?.checks ?? {})) {
        for (const check of checks) {
          if (check.status === 'success' || check.status === 'skip') continue
          const interaction = recorder?.interactions?.[caseId]
          const label = recorder?.label ?? `${interaction?.request?.method ?? '?'} ${interaction?.request?.uri ?? '?'}`
          const status = interaction?.response?.status_code
          const body = decode(interaction?.response?.content)
          const problem = parseProblem(body)
          const pointers = (problem?.errors ?? []).map((error) => String(error.pointer)).join(',')
          const excusedBy = check.name === 'positive_data_acceptance' ? excuse(label, status, body, operations) : undefined
          const message = check.failure_info?.failure?.message?.split('\n')[0] ?? check.status
          add({
            key: `${check.name} ${label} ${status} ${String(problem?.type)} ${pointers}`,
            text: `${check.name} on ${label}: ${message}; ${status ?? 'no response'} ${body.slice(0, 300)}`
              + `\n      request (case ${caseId}): ${decode(interaction?.request?.body).slice(0, 300)}`,
            excusedBy,
          })
        }
      }
    }
    if (kind === 'NonFatalError') {
      const info = (value.value ?? value.info) as unknown
      add({ key: `error ${String(value.label)} ${JSON.stringify(info).slice(0, 200)}`, text: `engine error on ${String(value.label)} (${String(value.phase)}): ${JSON.stringify(info).slice(0, 600)}` })
    }
    if (kind === 'FatalError') add({ key: `fatal ${line.slice(0, 200)}`, text: `fatal error: ${line.slice(0, 600)}` })
    if (kind === 'Interrupted') add({ key: 'interrupted', text: `interrupted in phase ${String(value.phase)}` })
    if (kind === 'EngineFinished') {
      finished = true
      for (const failure of (value.failures as unknown[] | undefined) ?? []) add({ key: `after_run ${JSON.stringify(failure).slice(0, 200)}`, text: `failure after the run: ${JSON.stringify(failure).slice(0, 600)}` })
    }
  }
  if (!finished) add({ key: 'unfinished', text: 'the report ends before EngineFinished: Schemathesis did not finish' })

  const excused = [...findings.values()].filter((finding) => finding.excusedBy)
  const failures = [...findings.values()].filter((finding) => !finding.excusedBy)
  const stStatus = Number(stStatusText)
  if (failures.length === 0 && excused.length === 0 && stStatus !== 0) {
    failures.push({ key: 'status', text: `Schemathesis exited ${stStatus} with no failure in its report` })
  }
  const byRule = new Map<RunTimeRule, number>()
  for (const finding of excused) byRule.set(finding.excusedBy as RunTimeRule, (byRule.get(finding.excusedBy as RunTimeRule) ?? 0) + 1)
  for (const [rule, count] of byRule) {
    process.stdout.write(`verdict: excused ${count}× positive_data_acceptance on ${rule.operation}: ${rule.status} ${rule.type}${rule.pointer ? ` at ${rule.pointer}` : ''} (${rule.why}; stated: "${rule.stated}")\n`)
  }
  for (const finding of failures) process.stdout.write(`verdict: FAILURE ${finding.text}\n`)
  process.stdout.write(`verdict: seed ${String(seed)}: ${failures.length} failure(s), ${excused.length} rejection(s) excused by run-time rules\n`)
  return failures.length === 0 ? 0 : 1
}

process.exitCode = await main()

/**
 * deploy/systemd/hashd.service, read as systemd reads it (`systemd-analyze verify`, skipped without
 * it; Debian: systemd) and checked against the server it runs: npm start's Node flags, a reload
 * that signals this service's main process alone (`ExecReload=/bin/kill -HUP $MAINPID`, never a
 * name that reaches every hashd on the host), a PID_FILE in the runtime folder systemd makes for
 * it, an environment hashd's configuration accepts, and a stop timeout above the drain's.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.js'
import { skipUnless } from './helpers/tools.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const UNIT = 'deploy/systemd/hashd.service'
const text = readFileSync(join(ROOT, UNIT), 'utf8')

/** The unit's settings, section by section, each key with every value it is given (systemd.syntax(7)). */
function parseUnit(source: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>()
  let current: Map<string, string[]> | undefined
  for (const line of source.split('\n')) {
    if (/^\s*([#;].*)?$/.test(line)) continue
    const section = /^\[(\w+)\]$/.exec(line)
    if (section) {
      sections.set(section[1]!, current = new Map())
      continue
    }
    const setting = /^(\w+)=(.*)$/.exec(line)
    assert.ok(setting && current, `${UNIT}: not a setting: ${line}`)
    current.set(setting[1]!, [...current.get(setting[1]!) ?? [], setting[2]!])
  }
  return sections
}

const service = parseUnit(text).get('Service') ?? new Map<string, string[]>()
const one = (key: string): string => {
  const values = service.get(key) ?? []
  assert.equal(values.length, 1, `${UNIT}: ${key}= is set ${values.length} times`)
  return values[0]!
}
const environment = Object.fromEntries((service.get('Environment') ?? []).map((assignment) => assignment.split(/=(.*)/s).slice(0, 2) as [string, string]))

describe('the systemd unit', () => {
  it('runs node with npm start\'s flags, as its own user, from the built tree', () => {
    const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? ''
    const startFlags = /\bnode((?: --\S+)*) dist\/src\/server\.js/.exec(start)?.[1]?.trim().split(' ') ?? []
    const directory = one('WorkingDirectory')
    assert.equal(one('ExecStart'), ['/usr/bin/node', ...startFlags, `${directory}/dist/src/server.js`].join(' '))
    assert.equal(one('Type'), 'exec')
    assert.equal(one('User'), 'hashd')
  })

  it('reloads by SIGHUP to its main process only, and keeps the PID in the runtime folder systemd makes for it', () => {
    assert.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID')
    assert.doesNotMatch(text, /pidof|pkill|killall/)
    assert.equal(dirname(environment.PID_FILE ?? ''), `/run/${one('RuntimeDirectory')}`)
  })

  it('gives hashd an environment its configuration accepts, and more time to stop than the drain takes', () => {
    const config = loadConfig(environment)
    assert.equal(config.pidFile, '/run/hashd/hashd.pid')
    assert.equal(one('KillSignal'), 'SIGTERM')
    assert.ok(Number(one('TimeoutStopSec')) * 1000 > config.shutdownTimeoutMs, 'TimeoutStopSec must be longer than SHUTDOWN_TIMEOUT_MS')
    // Exit status 2 is a configuration error: restarting cannot mend it.
    assert.equal(one('RestartPreventExitStatus'), '2')
  })

  it('systemd-analyze verify finds nothing to say', { skip: skipUnless('systemd-analyze') }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashd-unit-'))
    try {
      // verify checks that the program exists: this machine's node stands in for /usr/bin/node.
      writeFileSync(join(dir, 'hashd.service'), text.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `))
      const verified = spawnSync('systemd-analyze', ['verify', '--man=no', join(dir, 'hashd.service')], { encoding: 'utf8' })
      assert.deepEqual([verified.status, verified.stderr.trim()], [0, ''])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

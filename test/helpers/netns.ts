/**
 * A redis-server behind a network link the test controls: a network namespace of its own, joined
 * to this one by a veth pair on a link-local /30 (169.254.0.0/16: never a private range, never
 * routed off the machine), with redis-server inside it, bound to its end of the pair. hashd runs
 * in the test's namespace and reaches Redis over the veth, so the test can:
 *
 * - add latency to Redis's answers: `tc qdisc … netem delay` on the namespace's end (its egress),
 *   where the kernel has the netem qdisc (CONFIG_NET_SCH_NETEM). A kernel built without it (such
 *   as the CI machines' here, `tc` answering "Specified qdisc kind is unknown") gets the same
 *   delay from a relay in the test process that holds each chunk of Redis's answers for the delay,
 *   in order; `latencyBy` says which one is in force, and the tests print it;
 * - cut the link (`ip link set … down`): packets are dropped, no RST and no FIN, a partition;
 * - freeze, thaw, stop and start redis-server itself, like helpers/redis.ts.
 *
 * It needs root (or CAP_NET_ADMIN) and iproute2 (`ip`, `tc`): `namespaceSkip()` is the skip rule
 * of helpers/tools.ts for them (a missing package names it; no root is a reason too; with
 * HASHD_REQUIRE_TOOLS=1 either one fails). Everything it makes is removed by `destroy()`, and by an
 * exit hook if the test process ends first: redis-server is killed by its PID, then the namespace
 * is deleted, which deletes both ends of the pair.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sendRedis } from './redis.js'
import { skipBecause, skipUnless } from './tools.js'

export interface NamespacedRedis {
  /** The URL hashd uses: the veth address, or the relay's loopback port where there is no netem. */
  url: string
  /** How `setLatency` adds delay here. */
  latencyBy: 'netem' | 'relay'
  /** Delays every packet (or chunk) Redis sends by `ms`; 0 removes the delay. */
  setLatency(ms: number): Promise<void>
  /** Takes the link down (a partition: packets dropped, nothing tells either side) or up again. */
  setLink(up: boolean): void
  /** SIGSTOP / SIGCONT to redis-server. */
  pause(): void
  resume(): void
  /** SIGTERM and wait; then start again on the same address and wait until it answers PING. */
  stop(): Promise<void>
  start(): Promise<void>
  /** One command in the inline protocol, sent to Redis directly (not through the delay); the raw reply. */
  command(line: string): Promise<string>
  destroy(): Promise<void>
}

const ip = (args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })

let probed: false | string | undefined
/**
 * False where a namespace can be made here; otherwise why not (for `describe(…, { skip })`).
 * Makes and deletes one namespace to find out, once per process.
 */
export function namespaceSkip(): false | string {
  const missing = skipUnless('ip', 'tc', 'redis-server')
  if (missing) return missing
  if (probed !== undefined) return probed
  if (process.getuid?.() !== 0) return (probed = skipBecause('making a network namespace needs root (ip netns add)'))
  const name = `hashd-probe-${process.pid}`
  try {
    ip(['netns', 'add', name])
    ip(['netns', 'del', name])
    probed = false
  } catch (error) {
    probed = skipBecause(`cannot make a network namespace: ${String((error as { stderr?: unknown }).stderr ?? error).trim()}`)
  }
  return probed
}

/**
 * A TCP relay on loopback to `host:port` that holds each chunk of the server's answers for the
 * current delay before passing it on, in order (a chunk never overtakes the one before it).
 */
function delayingRelay(host: string, port: number): { server: Server, listening: Promise<number>, delay: { ms: number }, sockets: Set<Socket> } {
  const delay = { ms: 0 }
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(port, host)
    sockets.add(client).add(upstream)
    let due = 0
    client.pipe(upstream)
    upstream.on('data', (chunk: Buffer) => {
      due = Math.max(due, Date.now() + delay.ms)
      const wait = due - Date.now()
      if (wait <= 0) { client.write(chunk); return }
      setTimeout(() => { if (!client.destroyed) client.write(chunk) }, wait)
    })
    const close = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream) }
    // The close is passed on after the data before it.
    upstream.on('end', () => setTimeout(close, Math.max(0, due - Date.now())))
    upstream.on('error', close)
    client.on('error', close)
    client.on('close', close)
  })
  const listening = new Promise<number>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
  })
  return { server, listening, delay, sockets }
}

export async function startNamespacedRedis(): Promise<NamespacedRedis> {
  const tag = `${process.pid.toString(36)}${randomInt(36 ** 3).toString(36)}`.slice(-7)
  const namespace = `hashd-${tag}`
  const [outer, inner] = [`hd${tag}a`, `hd${tag}b`]
  // A /30 at random in 169.254.0.0/16 (not 169.254.169.x, where clouds keep their metadata service).
  let third = randomInt(1, 255)
  if (third === 169) third = 170
  const fourth = randomInt(64) * 4
  const [outerAddress, innerAddress] = [`169.254.${third}.${fourth + 1}`, `169.254.${third}.${fourth + 2}`]
  const port = randomInt(20_000, 60_000)
  const dir = mkdtempSync(join(tmpdir(), 'hashd-netns-redis-'))
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let output = ''

  const removeAll = () => {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try { process.kill(child.pid, 'SIGCONT'); process.kill(child.pid, 'SIGKILL') } catch { /* gone */ }
    }
    try { ip(['netns', 'del', namespace]) } catch { /* not made, or gone */ }
    try { ip(['link', 'del', outer]) } catch { /* went with the namespace */ }
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', removeAll)

  try {
    ip(['netns', 'add', namespace])
    ip(['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner, 'netns', namespace])
    ip(['addr', 'add', `${outerAddress}/30`, 'dev', outer])
    ip(['link', 'set', outer, 'up'])
    ip(['-n', namespace, 'addr', 'add', `${innerAddress}/30`, 'dev', inner])
    ip(['-n', namespace, 'link', 'set', inner, 'up'])
    ip(['-n', namespace, 'link', 'set', 'lo', 'up'])
  } catch (error) {
    removeAll()
    throw error
  }
  const tc = (args: string[]) => execFileSync('ip', ['netns', 'exec', namespace, 'tc', ...args], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })

  // netem, where the kernel has it: an empty delay added and removed.
  let latencyBy: 'netem' | 'relay' = 'netem'
  try {
    tc(['qdisc', 'add', 'dev', inner, 'root', 'netem', 'delay', '0ms'])
    tc(['qdisc', 'del', 'dev', inner, 'root'])
  } catch {
    latencyBy = 'relay'
  }

  const start = async () => {
    output = ''
    // `ip netns exec` execs redis-server in the namespace: the child's PID is redis-server's.
    child = spawn('ip', ['netns', 'exec', namespace, 'redis-server', '--port', String(port), '--bind', innerAddress,
      // Protected mode refuses every client not on loopback when no password is set; this Redis is
      // reachable only from this machine, over the pair.
      '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    const current = child
    exited = new Promise((resolve) => current.once('exit', () => resolve()))
    const deadline = Date.now() + 10_000
    for (;;) {
      try {
        if ((await sendRedis('PING', port, innerAddress)).startsWith('+PONG')) return
      } catch { /* not listening yet */ }
      if (current.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start in the namespace: ${output}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT')
      child.kill('SIGTERM')
      await exited
    }
  }
  try {
    await start()
  } catch (error) {
    removeAll()
    throw error
  }

  const relay = latencyBy === 'relay' ? delayingRelay(innerAddress, port) : undefined
  const relayPort = relay ? await relay.listening : undefined
  return {
    url: relay ? `redis://127.0.0.1:${relayPort}/0` : `redis://${innerAddress}:${port}/0`,
    latencyBy,
    setLatency: async (ms) => {
      if (relay) { relay.delay.ms = ms; return }
      if (ms > 0) tc(['qdisc', 'replace', 'dev', inner, 'root', 'netem', 'delay', `${ms}ms`])
      else tc(['qdisc', 'del', 'dev', inner, 'root'])
    },
    setLink: (up) => { ip(['link', 'set', outer, up ? 'up' : 'down']) },
    pause: () => { child?.kill('SIGSTOP') },
    resume: () => { child?.kill('SIGCONT') },
    stop,
    start,
    command: (line) => sendRedis(line, port, innerAddress),
    destroy: async () => {
      if (relay) {
        for (const socket of relay.sockets) socket.destroy()
        await new Promise((resolve) => relay.server.close(resolve))
      }
      await stop()
      removeAll()
      process.removeListener('exit', removeAll)
    },
  }
}

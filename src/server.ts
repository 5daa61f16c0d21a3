/**
 * Entry point: read the configuration, start listening, and on SIGTERM/SIGINT stop accepting,
 * finish in-flight requests, then exit.
 */
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'
import { tuneMemory } from './memory-tuning.js'

async function main(): Promise<void> {
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`hashd: ${error.message}\n`)
      process.exit(2)
    }
    throw error
  }
  // Before the app starts its threads: glibc reads the arena limit when it makes a new arena.
  const memory = tuneMemory(config.memoryTuning)
  const app = await buildApp(config)
  app.log.debug({ malloc: memory.applied, skipped: memory.skipped }, 'memory tuning')
  await app.listen({ host: config.host, port: config.port })

  let closing = false
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    const deadline = setTimeout(() => {
      app.log.warn('shutdown deadline passed; exiting with requests still open')
      process.exit(1)
    }, config.shutdownTimeoutMs)
    deadline.unref()
    app.close().then(() => process.exit(0), (error: unknown) => {
      app.log.error({ err: error }, 'error while closing')
      process.exit(1)
    })
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
}

main().catch((error: unknown) => {
  // Configuration read while building the app (API_KEYS_FILE) fails the same way as the environment's.
  if (error instanceof ConfigError) {
    process.stderr.write(`hashd: ${error.message}\n`)
    process.exit(2)
  }
  process.stderr.write(`hashd failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})

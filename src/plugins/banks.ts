/**
 * The similarity banks for the app (src/similarity/bank-folder.ts): opened at start from
 * SIMILARITY_BANKS_DIR (a folder that cannot be listed is a ConfigError and the server does not
 * start; a bank file that does not open is refused, logged and shown by /api/health, and the other
 * banks serve), kept current while it runs, closed with the app. Routes hand the domain
 * `app.matchContext(request)`: the banks in force and the banks the request's API key may search.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { openBankFolder, type BankFolder } from '../similarity/bank-folder.js'
import { registerBanks } from '../similarity/bank-status.js'
import type { MatchContext } from '../similarity/match.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The similarity banks, or null without SIMILARITY_BANKS_DIR. */
    banks: BankFolder | null
    /** What the match domain needs for this request. */
    matchContext(request: FastifyRequest): MatchContext
  }
}

async function banksPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const { similarityBanksDir: folder, fileReloadPollMs } = options.config
  const banks = folder === null ? null : await openBankFolder(folder, app.log, fileReloadPollMs)
  app.decorate('banks', banks)
  if (banks) {
    const unregister = registerBanks(() => banks.value.statuses())
    app.addHook('onClose', async () => { unregister(); banks.close() })
    app.log.info({ folder, banks: banks.value.statuses().map(({ name, state, type, count }) => ({ name, state, type, count })) }, 'similarity banks ready')
  }
  app.decorate('matchContext', (request: FastifyRequest): MatchContext => ({
    banks: banks?.value ?? null,
    allowed: request.apiKey?.banks ?? null,
    keyName: request.apiKey?.name ?? null,
  }))
}

export default fp(banksPlugin, { name: 'banks', dependencies: ['auth'] })

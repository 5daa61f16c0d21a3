/**
 * Password screening's files, loaded at start and kept current (file-reload.ts): the organization's
 * blocklist (PASSWORD_BLOCKLIST_FILE) and the breached-password stores (PWNED_STORE,
 * PWNED_NTLM_STORE). A file that cannot be read, or a store that is damaged, truncated or of
 * another format version, stops the server at start (a ConfigError: exit status 2); on a reload
 * the version in force stays and /api/health says why. A new store is opened and checked before it
 * replaces the old one, whose descriptor is closed once the reads in flight on it have finished.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { reloadable, type Reloadable } from '../file-reload.js'
import { readBlocklistFile } from '../screening/blocklist-file.js'
import { commonPasswords } from '../screening/common.js'
import { Screening } from '../screening/screen.js'
import { registerStore } from '../screening/status.js'
import { PwnedStore, type HashKind } from '../screening/store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The screening seam (src/screening/screen.ts). */
    screening: Screening
  }
}

async function screeningPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const { screening: config } = options.config
  const closers: Array<() => void> = []
  app.addHook('onClose', async () => { for (const close of closers.splice(0)) close() })

  const blocklistFile = config.blocklistFile
  const blocklist = blocklistFile === null ? null : reloadable({
    source: 'password-blocklist', what: 'password blocklist', files: [blocklistFile], log: app.log, pollMs: options.config.fileReloadPollMs,
    load: () => readBlocklistFile(blocklistFile), describe: (list) => ({ blocklistFile, entries: list.size }),
  })
  if (blocklist) closers.push(() => blocklist.close())

  const openStore = (file: string | null, kind: HashKind): Reloadable<PwnedStore> | null => {
    if (file === null) return null
    const variable = kind === 'sha1' ? 'PWNED_STORE' : 'PWNED_NTLM_STORE'
    const store = reloadable({
      source: kind === 'sha1' ? 'pwned-store' : 'pwned-ntlm-store', what: `breached-password store (${variable})`, files: [file], log: app.log, pollMs: options.config.fileReloadPollMs,
      load: () => PwnedStore.open(file, variable, kind),
      loadAsync: () => PwnedStore.openAsync(file, variable, kind),
      describe: (opened) => ({ store: file, hashes: opened.header.hashes, dataDate: opened.header.dataDate.toISOString(), id: opened.id }),
      swapped: (_next, previous) => previous.retire(),
      discarded: (unused) => unused.retire(),
    })
    const unregister = registerStore(() => store.value.facts())
    closers.push(() => { unregister(); store.close(); store.value.retire() })
    return store
  }
  let sha1: Reloadable<PwnedStore> | null = null
  let ntlm: Reloadable<PwnedStore> | null = null
  try {
    sha1 = openStore(config.pwnedStore, 'sha1')
    ntlm = openStore(config.pwnedNtlmStore, 'ntlm')
  } catch (error) {
    for (const close of closers.splice(0)) close()
    throw error
  }

  const screening = new Screening(
    { minLength: config.minLength, maxLength: config.maxLength, mode: config.mode, fail: config.fail },
    {
      common: commonPasswords(), blocklist, sha1, ntlm,
      onStoreError: (error) => app.log.error({ reason: (error as NodeJS.ErrnoException).code ?? (error as Error).message }, 'breached-password store read failed'),
    },
  )
  app.decorate('screening', screening)
  app.log.info({
    screening: config.mode, fail: config.fail, commonPasswords: screening.commonPasswords,
    blocklist: screening.blocklistEntries, stores: [sha1, ntlm].filter((store) => store !== null).map((store) => store.value.facts()),
  }, 'password screening ready')
}

export default fp(screeningPlugin, { name: 'screening' })

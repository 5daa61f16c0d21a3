/**
 * node:http, loaded with require rather than imported. Since Node 22.5 the module has lazy
 * WebSocket, CloseEvent and MessageEvent exports, backed by Node's bundled undici, which is "quite
 * big" and loaded only when one of them is read (nodejs/node#53721). An ESM import of node:http
 * builds the module's namespace, which reads every export and so loads undici
 * (nodejs/node#59686). On Node 24 that is 12 MB of a process's RSS, for a client hashd never
 * uses (docs/operations.md, "Memory"); require returns the module itself, whose getters stay
 * unread. Fastify requires node:http the same way. Types still come from `import type`, which
 * loads nothing.
 */
import { createRequire } from 'node:module'

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http')

export const { createServer, STATUS_CODES } = http

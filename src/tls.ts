/**
 * HTTPS on the main port: TLS_CERT_FILE (the certificate, then any intermediates) and TLS_KEY_FILE
 * (its key), in PEM; with TLS_CLIENT_CA_FILE, every client must present a certificate that chains
 * to one of its CAs (mutual TLS), and a connection without one is refused in the handshake.
 * TLS 1.2 and 1.3 only (RFC 8996 deprecates 1.0 and 1.1), with Node's default cipher list.
 *
 * The files are read again when they change on disk and on SIGHUP (file-reload.ts), so a
 * certificate renewed by cert-manager or certbot is served without a restart: new connections get
 * the new certificate, open ones keep theirs. A set of files that does not make a working
 * context (a key that is not the certificate's, a half-written file) is refused and the one in
 * force stays, shown in /api/health and the metrics until a load succeeds.
 *
 * Without TLS, passwords and keys cross the network in the clear: `plaintextWarning` says so at
 * start when hashd listens beyond loopback and holds secrets (docs/security.md).
 */
import { X509Certificate, createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { ServerOptions } from 'node:https'
import { isIP } from 'node:net'
import { createSecureContext, type SecureContextOptions, type Server as TlsServer } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import { ConfigError, type Config, type TlsConfig } from './config.js'
import { reloadable, type Reloadable } from './file-reload.js'

/** TLS 1.0 and 1.1 are refused (RFC 8996); 1.3 is Node's maximum. */
export const MIN_TLS_VERSION = 'TLSv1.2'

/** The files' contents and what may be logged about them. */
export interface TlsMaterial {
  cert: Buffer
  key: Buffer
  /** The client CAs (mTLS), or null. */
  clientCa: Buffer | null
  /** The leaf certificate, for logs and /api/health: never the key. */
  subject: string
  notAfter: string
  fingerprint256: string
  clientCas: number
}

function readPem(variable: string, file: string, marker: RegExp, what: string): Buffer {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (error) {
    throw new ConfigError(`${variable} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  if (!marker.test(bytes.toString('latin1'))) throw new ConfigError(`${variable} ${file} holds no PEM ${what}`)
  return bytes
}

/** OpenSSL's reason (`key values mismatch`, `ee key too small`…), without its code: it names no secret. */
function opensslReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return /::([^:]+)$/.exec(message)?.[1] ?? message.replace(/^error:[0-9A-F]+:/, '').slice(0, 120)
}

/** Reads the files and builds a context from them once, so that a bad set is refused here. */
export function readTlsMaterial(tls: TlsConfig): TlsMaterial {
  const cert = readPem('TLS_CERT_FILE', tls.certFile, /-----BEGIN CERTIFICATE-----/, 'certificate')
  const key = readPem('TLS_KEY_FILE', tls.keyFile, /-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'private key')
  const clientCa = tls.clientCaFile === null ? null : readPem('TLS_CLIENT_CA_FILE', tls.clientCaFile, /-----BEGIN CERTIFICATE-----/, 'CA certificate')
  let leaf: X509Certificate
  try {
    leaf = new X509Certificate(cert)
  } catch (error) {
    throw new ConfigError(`TLS_CERT_FILE ${tls.certFile}: not a certificate OpenSSL can read (${opensslReason(error)})`)
  }
  const material: TlsMaterial = {
    cert, key, clientCa,
    subject: leaf.subject.replaceAll('\n', ', '),
    notAfter: new Date(leaf.validTo).toISOString(),
    fingerprint256: leaf.fingerprint256,
    clientCas: clientCa === null ? 0 : clientCa.toString('latin1').split('-----BEGIN CERTIFICATE-----').length - 1,
  }
  try {
    createSecureContext(secureContextOptions(material))
  } catch (error) {
    throw new ConfigError(`TLS_CERT_FILE ${tls.certFile} and TLS_KEY_FILE ${tls.keyFile}${clientCa ? ` and TLS_CLIENT_CA_FILE ${tls.clientCaFile}` : ''} do not make a TLS context: ${opensslReason(error)}`)
  }
  return material
}

/** What a new context is made of (also what setSecureContext takes on a reload). */
export function secureContextOptions(material: TlsMaterial): SecureContextOptions {
  return { cert: material.cert, key: material.key, minVersion: MIN_TLS_VERSION, ...(material.clientCa ? { ca: material.clientCa } : {}) }
}

/** The HTTPS server's options: the context's, and with client CAs, certificates required of every client. */
export function tlsServerOptions(material: TlsMaterial): ServerOptions {
  const mutual = material.clientCa !== null
  return { ...secureContextOptions(material), requestCert: mutual, rejectUnauthorized: mutual }
}

/** What the log lines say about the files in force: the certificate, never the key. */
export function describeTls(material: TlsMaterial): Record<string, unknown> {
  return {
    subject: material.subject, notAfter: material.notAfter, fingerprint256: material.fingerprint256,
    keyId: createHash('sha256').update(material.cert).digest('hex').slice(0, 16), clientCas: material.clientCas,
  }
}

/**
 * Keeps the server's certificate up to date with the files: the material read at start is in
 * force; a change on disk or SIGHUP reads them again and, when they make a context, swaps it in
 * for new connections.
 */
export function reloadTls(app: FastifyInstance, tls: TlsConfig, pollMs?: number): Reloadable<TlsMaterial> {
  const files = [tls.certFile, tls.keyFile, ...(tls.clientCaFile === null ? [] : [tls.clientCaFile])]
  const server = app.server as unknown as TlsServer
  const reloading = reloadable({
    source: 'tls', what: 'TLS certificate', files, log: app.log, describe: describeTls, pollMs,
    load: () => readTlsMaterial(tls),
    swapped: (next) => { server.setSecureContext(secureContextOptions(next)) },
  })
  // The server was made from a first read; what this one read is what is in force from now on.
  server.setSecureContext(secureContextOptions(reloading.value))
  app.addHook('onClose', async () => { reloading.close() })
  return reloading
}

/** 127.0.0.0/8, ::1 and localhost: a listener only this machine reaches. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (bare === 'localhost' || bare === '::1') return true
  const v4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare
  return isIP(v4) === 4 && v4.startsWith('127.')
}

/**
 * The warning for a server that holds secrets (a pepper, HMAC keys) and takes passwords over plain
 * HTTP from beyond this machine, or null. Behind a proxy that terminates TLS on the same host, or a
 * service mesh that encrypts every hop, the traffic is protected all the same; the line says so.
 */
export function plaintextWarning(config: Config): string | null {
  if (config.tls !== null || isLoopback(config.host) || config.secretKeyFiles.length === 0) return null
  return `listening on ${config.host} over plain HTTP with ${config.secretKeyFiles.join(' and ')} set: passwords and keys cross the network unencrypted. ` +
    'Set TLS_CERT_FILE and TLS_KEY_FILE (and TLS_CLIENT_CA_FILE for client certificates), or listen on 127.0.0.1 behind a TLS proxy; ' +
    'ignore this only where every hop to hashd is encrypted (a mesh sidecar, an ingress on the same host). See docs/security.md'
}

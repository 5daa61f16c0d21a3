/**
 * The image's health check (Dockerfile HEALTHCHECK, compose.yaml): `node dist/src/healthcheck.js`
 * exits 0 when the server on this container's loopback answers GET /api/health with 200, else 1.
 *
 * - Over HTTPS when TLS_CERT_FILE is set. The certificate is not checked: it names the service,
 *   not 127.0.0.1, and this is the container asking its own process.
 * - With TLS_CLIENT_CA_FILE the port answers only clients with a certificate from that CA, which
 *   this check does not hold: it then checks that the port accepts a connection. (Kubernetes
 *   probes cannot present one either: deploy/kubernetes/deployment.yaml says what to use.)
 */
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect } from 'node:net'

const port = Number(process.env.PORT ?? 3000)
const host = '127.0.0.1'
const timeoutMs = 4_000
const done = (healthy: boolean): never => process.exit(healthy ? 0 : 1)
setTimeout(() => done(false), timeoutMs).unref()

if (process.env.TLS_CLIENT_CA_FILE?.trim()) {
  const socket = connect({ host, port }, () => { socket.destroy(); done(true) })
  socket.on('error', () => done(false))
} else {
  const tls = Boolean(process.env.TLS_CERT_FILE?.trim())
  const request = (tls ? httpsRequest : httpRequest)({ host, port, path: '/api/health', rejectUnauthorized: false, timeout: timeoutMs }, (response) => {
    response.resume()
    done(response.statusCode === 200)
  })
  request.on('error', () => done(false))
  request.end()
}

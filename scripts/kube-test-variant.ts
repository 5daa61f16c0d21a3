/**
 * `node dist/scripts/kube-test-variant.js DIR IMAGE PORT REDIS_PORT [REDIS_IMAGE]`: prints the
 * Deployments of the Kubernetes manifests in DIR (as kustomization.yaml lists them) changed only as
 * far as `podman kube play` on a CI machine needs (scripts/container-ci.sh):
 * - host networking (no bridge or container network may be made there), so the containers listen on
 *   127.0.0.1 at free ports: PORT for hashd, REDIS_PORT for Redis, and hashd's REDIS_URL follows;
 * - no `ports` (podman 4.3 refuses port mappings with host networking: "PortMappings can only be
 *   used with Bridge or slirp4netns networking"), so probes name their port by number instead;
 * - one replica; the image just built, and the local Redis image, with no pull;
 * - Redis's user left to its image (Debian's redis user is not the official image's uid 999).
 * Everything else (probes, security context, resources, preStop, env) is kept as written, so kube
 * play runs the manifest's own settings. Services, the HPA and the PDB are left out: kube play does
 * not run them (test/deploy-files.test.ts checks them structurally).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'

interface Container {
  name: string
  image: string
  imagePullPolicy?: string
  args?: string[]
  env?: { name: string, value?: string }[]
  ports?: { name?: string, containerPort: number }[]
  [key: string]: unknown
}
interface Deployment {
  kind: string
  metadata: { name: string }
  spec: {
    replicas?: number
    template: { spec: { hostNetwork?: boolean, securityContext?: Record<string, unknown>, containers: Container[] } }
  }
}

const [dir, image, port, redisPort, redisImage = 'localhost/hashd-ci/redis:bookworm'] = process.argv.slice(2)
if (!dir || !image || !port || !redisPort) {
  process.stderr.write('usage: node dist/scripts/kube-test-variant.js DIR IMAGE PORT REDIS_PORT [REDIS_IMAGE]\n')
  process.exit(2)
}

const kustomization = parseAllDocuments(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))[0]?.toJS() as { resources: string[] }
const deployments = kustomization.resources
  .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((document) => document.toJS() as Deployment))
  .filter((document) => document.kind === 'Deployment')

function setEnv(container: Container, name: string, value: string): void {
  container.env = [...(container.env ?? []).filter((entry) => entry.name !== name), { name, value }]
}

/** Drops the port list and puts the number into every probe that named a port. */
function numberProbePorts(container: Container, port: number): void {
  delete container.ports
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
    const action = container[probe] as { httpGet?: { port: unknown }, tcpSocket?: { port: unknown } } | undefined
    if (action?.httpGet) action.httpGet.port = port
    if (action?.tcpSocket) action.tcpSocket.port = port
  }
}

for (const deployment of deployments) {
  deployment.spec.replicas = 1
  const pod = deployment.spec.template.spec
  pod.hostNetwork = true
  for (const container of pod.containers) {
    container.imagePullPolicy = 'Never'
    if (container.name === 'hashd') {
      container.image = image
      setEnv(container, 'HOST', '127.0.0.1')
      setEnv(container, 'PORT', port)
      setEnv(container, 'REDIS_URL', `redis://127.0.0.1:${redisPort}/0`)
      numberProbePorts(container, Number(port))
    } else if (container.name === 'redis') {
      container.image = redisImage
      container.args = [...(container.args ?? []), '--bind', '127.0.0.1', '--port', redisPort]
      numberProbePorts(container, Number(redisPort))
      container.readinessProbe = { exec: { command: ['redis-cli', '-p', redisPort, 'ping'] }, periodSeconds: 5 }
      delete pod.securityContext?.runAsUser
      delete pod.securityContext?.runAsGroup
    } else {
      throw new Error(`no test variant for container ${container.name}`)
    }
  }
}
process.stdout.write(deployments.map((deployment) => stringify(deployment)).join('---\n'))

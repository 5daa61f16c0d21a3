/**
 * The deployment files, read as a cluster or an engine would read them, and checked against the
 * server they run: the Dockerfile's Node flags are npm start's, the Kubernetes manifests hang
 * together (selectors, ports, the HPA's and the PDB's targets, Redis's address), their hardening
 * and probes are there, the environment they give hashd is one its own configuration accepts, and
 * the memory limit, the work budget and the drain times agree. scripts/container-ci.sh runs the
 * image and the Deployments for real (podman); this test is what every machine checks, including
 * the kinds `podman kube play` does not run (Service, HorizontalPodAutoscaler, PodDisruptionBudget).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { loadConfig } from '../src/config.js'
import { parseKeysFile } from '../src/keys/api-keys.js'
import { parseHmacKeysFile } from '../src/keys/hmac.js'
import { parsePepperKeysFile } from '../src/keys/pepper.js'
import { BANK_EXTENSION, BANK_NAME } from '../src/similarity/bank-names.js'
import { isBankType } from '../src/similarity/banks/index.js'
import { randomBytes } from 'node:crypto'
import { dirname, posix } from 'node:path'

const root = fileURLToPath(new URL('../../', import.meta.url))
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8')
const MiB = 1024 * 1024

/**
 * The process outside the work budget: the main thread's heap, upload buffers and the threads'
 * isolates. docs/deployment.md ("Sizing") gives the same figures; the lead reconciles them with the
 * speed issue's measured peak.
 */
const PROCESS_BYTES = 256 * MiB
const PER_THREAD_BYTES = 32 * MiB

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML trees */
type Doc = any
const kubeDir = 'deploy/kubernetes/'
const kustomization = parseAllDocuments(read(`${kubeDir}kustomization.yaml`))[0]?.toJS() as Doc
const docs: Doc[] = (kustomization.resources as string[]).flatMap((file) => parseAllDocuments(read(`${kubeDir}${file}`)).map((d) => d.toJS() as Doc))
const find = (kind: string, name: string): Doc => {
  const found = docs.find((d) => d.kind === kind && d.metadata?.name === name)
  assert.ok(found, `${kind}/${name} is not in the manifests`)
  return found
}
const labelsMatch = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value)

function quantityBytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity)
  assert.ok(match, `memory quantity ${quantity}`)
  return Number(match[1]) * ({ Ki: 1024, Mi: MiB, Gi: 1024 * MiB }[match[2] ?? ''] ?? 1)
}

/** The limit a process with this configuration needs (docs/deployment.md, "Sizing"). */
function neededBytes(env: Record<string, string>): number {
  const config = loadConfig(env)
  return config.maxWorkMemoryBytes + config.workerThreads * PER_THREAD_BYTES + PROCESS_BYTES
}

/** A manifest with every commented setting enabled (a line `# key: value` or `# - key: value` loses its `# `), prose left as it is. */
const enableCommented = (text: string): string => text.split('\n')
  .map((line) => /^\s*#\s*(?:- )?[A-Za-z][A-Za-z0-9_]*:(?: |$)/.test(line) && !/^\s*# [A-Z][a-z]+:/.test(line) ? line.replace('# ', '') : line).join('\n')

describe('deployment files', () => {
  it('the Dockerfile runs with npm start\'s Node flags, as node, on 0.0.0.0:3000, with a HEALTHCHECK', () => {
    const dockerfile = read('Dockerfile')
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start ?? ''
    const startFlags = /\bnode((?: --\S+)*) dist\/src\/server\.js/.exec(start)?.[1]?.trim().split(' ').filter(Boolean) ?? []
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[]
    assert.deepEqual(cmd, ['node', ...startFlags, 'dist/src/server.js'], 'the image\'s CMD and npm start differ in their Node flags')
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:24-bookworm-slim$/m)
    assert.match(dockerfile, /^USER node$/m)
    assert.match(dockerfile, /^ENV .*\bHOST=0\.0\.0\.0\b.*\bPORT=3000\b/m)
    assert.match(dockerfile, /^EXPOSE 3000$/m)
    assert.match(dockerfile, /^HEALTHCHECK .*\n {2}CMD \["node", "dist\/src\/healthcheck\.js"\]$/m)
    assert.match(dockerfile, /npm prune --omit=dev/)
  })

  it('one image tag everywhere: package.json\'s version in kustomization.yaml, compose.yaml and every docker command of the README and docs', () => {
    const version = (JSON.parse(read('package.json')) as { version: string }).version
    assert.deepEqual(kustomization.images, [{ name: 'hashd', newTag: version }])
    const compose = parseAllDocuments(read('compose.yaml'))[0]?.toJS() as Doc
    assert.equal(compose.services.hashd.image, `hashd:${version}`)
    for (const page of ['README.md', 'docs/deployment.md']) {
      const commands = read(page).split('\n').filter((line) => /^\s*(\$ )?(docker|podman) (build|run)\b/.test(line))
      assert.ok(commands.length > 0, page)
      for (const command of commands) {
        // Every image named is hashd at this version (a registry path may precede it).
        const images = [...command.matchAll(/(?:^|\s|\/)hashd(?::([\w.-]+))?(?=\s|$)/g)].map((match) => match[1])
        for (const tag of images) assert.equal(tag, version, `${page}: ${command.trim()}`)
      }
    }
  })

  it('the README\'s docker run is read-only as it says, and each flag says what it does', () => {
    const readme = read('README.md')
    const run = readme.split('\n').find((line) => /^docker run .* -p 3000:3000/.test(line))
    assert.ok(run, 'the README runs the image')
    for (const flag of ['--read-only', '--tmpfs /tmp', '--cap-drop ALL']) assert.ok(run.includes(flag), `${flag} in ${run}`)
    const compose = parseAllDocuments(read('compose.yaml'))[0]?.toJS() as Doc
    assert.equal(compose.services.hashd.read_only, true)
    // The README's Docker block explains its flags in comments.
    const block = /```sh\n(docker build[\s\S]*?)```/.exec(readme)?.[1] ?? ''
    for (const flag of ['--read-only', '--tmpfs', '--cap-drop', '-p 3000:3000']) assert.match(block, new RegExp(`#.*${flag.replace(/[-]/g, '\\-')}`), `a comment on ${flag}`)
  })

  it('kustomization.yaml lists every manifest, and only the example is left out', () => {
    const files = readdirSync(`${root}${kubeDir}`).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    const listed = kustomization.resources as string[]
    assert.deepEqual([...files].filter((file) => !file.includes('.example.')).sort(), [...listed].sort())
    for (const doc of docs) assert.ok(doc.apiVersion && doc.kind && doc.metadata?.name, JSON.stringify(doc).slice(0, 200))
  })

  it('the hashd Deployment: replicas, probes, resources, hardening, a drain that fits the grace period', () => {
    const deployment = find('Deployment', 'hashd')
    assert.ok(deployment.spec.replicas >= 2)
    assert.ok(labelsMatch(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels))
    const pod = deployment.spec.template.spec
    const container = pod.containers.find((c: Doc) => c.name === 'hashd')
    assert.equal(pod.securityContext.runAsNonRoot, true)
    assert.equal(container.securityContext.readOnlyRootFilesystem, true)
    assert.equal(container.securityContext.allowPrivilegeEscalation, false)
    assert.deepEqual(container.securityContext.capabilities.drop, ['ALL'])
    assert.equal(container.livenessProbe.httpGet.path, '/api/health')
    assert.equal(container.readinessProbe.httpGet.path, '/api/ready')
    for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
      assert.ok(container.ports.some((port: Doc) => port.name === probe.httpGet.port), 'a probe names a port the container has')
    }
    for (const kind of ['requests', 'limits']) {
      assert.ok(container.resources[kind].cpu && container.resources[kind].memory, `resources.${kind}`)
    }

    const env = Object.fromEntries(container.env.map((e: Doc) => [e.name, String(e.value)])) as Record<string, string>
    const config = loadConfig(env)
    assert.equal(config.port, container.ports[0].containerPort)
    assert.equal(config.host, '0.0.0.0')
    const preStopSeconds = Number(container.lifecycle?.preStop?.exec?.command?.[1] ?? 0)
    assert.ok(pod.terminationGracePeriodSeconds * 1000 > preStopSeconds * 1000 + config.shutdownTimeoutMs,
      'terminationGracePeriodSeconds must be longer than the preStop pause plus SHUTDOWN_TIMEOUT_MS')
    // The budget is set: os.totalmem() in a pod is the node's memory, not the limit.
    assert.ok(env.MAX_WORK_MEMORY_BYTES && env.WORKER_THREADS)
    assert.ok(quantityBytes(container.resources.limits.memory) >= neededBytes(env),
      `the memory limit ${container.resources.limits.memory} is below MAX_WORK_MEMORY_BYTES + threads + the process (${neededBytes(env) / MiB} MiB)`)
    // Set explicitly, above the idle timeout of the ingress that pools connections to the pods
    // (ingress-nginx's upstream-keepalive-timeout and AWS ALB's: 60 s; docs/deployment.md, "Keep-alive").
    assert.ok(env.KEEP_ALIVE_TIMEOUT_MS, 'KEEP_ALIVE_TIMEOUT_MS is set in deployment.yaml')
    assert.ok(config.keepAliveTimeoutMs > 60_000, `KEEP_ALIVE_TIMEOUT_MS ${config.keepAliveTimeoutMs} is not above the ingress's 60 s`)
  })

  it('the Service, HPA and PDB point at the Deployment; REDIS_URL at the Redis Service', () => {
    const deployment = find('Deployment', 'hashd')
    const labels = deployment.spec.template.metadata.labels
    const service = find('Service', 'hashd')
    assert.ok(labelsMatch(service.spec.selector, labels))
    const ports = deployment.spec.template.spec.containers[0].ports.map((port: Doc) => port.name)
    for (const port of service.spec.ports) assert.ok(ports.includes(port.targetPort), `targetPort ${port.targetPort}`)

    const hpa = find('HorizontalPodAutoscaler', 'hashd')
    assert.deepEqual([hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name], ['Deployment', 'hashd'])
    assert.ok(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas >= hpa.spec.minReplicas)
    const pdb = find('PodDisruptionBudget', 'hashd')
    assert.ok(labelsMatch(pdb.spec.selector.matchLabels, labels))
    assert.ok(pdb.spec.minAvailable < deployment.spec.replicas)

    const redisUrl = new URL(deployment.spec.template.spec.containers[0].env.find((e: Doc) => e.name === 'REDIS_URL').value as string)
    const redisService = find('Service', redisUrl.hostname)
    assert.ok(redisService.spec.ports.some((port: Doc) => String(port.port) === redisUrl.port))
    const redis = find('Deployment', redisUrl.hostname)
    assert.ok(labelsMatch(redisService.spec.selector, redis.spec.template.metadata.labels))
    assert.match(read(`${kubeDir}redis.yaml`), /managed Redis/)
  })

  it('the Secret example holds a keys file hashd accepts', () => {
    const [secret] = parseAllDocuments(read(`${kubeDir}api-keys-secret.example.yaml`)).map((d) => d.toJS() as Doc)
    assert.equal(secret.kind, 'Secret')
    const keys = parseKeysFile(secret.stringData['api-keys'] as string, 'api-keys')
    assert.equal(keys.size, 1)
  })

  it('the keys Secret example: files hashd accepts once its placeholders are replaced, mounted whole (never subPath) where the commented env points', () => {
    const [secret] = parseAllDocuments(read(`${kubeDir}keys-secret.example.yaml`)).map((d) => d.toJS() as Doc)
    assert.equal(secret.kind, 'Secret')
    const files = secret.stringData as Record<string, string>
    // The placeholders are refused, so the example cannot be deployed as it is.
    assert.throws(() => parsePepperKeysFile(files['pepper-keys']!, 'pepper-keys'), /field 2: the secret must be base64 or base64url of at least 32 bytes .*fewer bytes/)
    assert.throws(() => parseHmacKeysFile(files['hmac-keys']!, 'hmac-keys'), /field 3: the secret must be base64 or base64url of at least 32 bytes .*fewer bytes/)
    const filled = (text: string) => text.replaceAll('CHANGE-ME-openssl-rand-base64-32', () => randomBytes(32).toString('base64'))
    assert.equal(parsePepperKeysFile(filled(files['pepper-keys']!), 'pepper-keys').current.id, 'k1')
    assert.deepEqual(parseHmacKeysFile(filled(files['hmac-keys']!), 'hmac-keys').names, ['orders'])

    const deployment = parseAllDocuments(enableCommented(read(`${kubeDir}deployment.yaml`))).map((d) => d.toJS() as Doc).find((d) => d.kind === 'Deployment')
    const container = deployment.spec.template.spec.containers[0]
    const env = Object.fromEntries((container.env as Doc[]).map((entry) => [entry.name, entry.value]))
    const mount = (container.volumeMounts as Doc[]).find((each) => each.name === 'keys')
    const volume = (deployment.spec.template.spec.volumes as Doc[]).find((each) => each.name === 'keys')
    assert.ok(mount && volume, 'the commented keys volume and mount')
    assert.equal(mount.subPath, undefined, 'a subPath mount is never updated')
    assert.equal(volume.secret.secretName, secret.metadata.name)
    for (const [variable, key] of [['PEPPER_KEYS_FILE', 'pepper-keys'], ['HMAC_KEYS_FILE', 'hmac-keys']] as const) {
      assert.equal(env[variable], `${mount.mountPath}/${key}`, variable)
      assert.ok(Object.hasOwn(files, key), key)
    }
    const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([, value]) => typeof value === 'string')) as Record<string, string>)
    assert.equal(config.hmacKeysFile, '/etc/hashd-keys/hmac-keys')
    const compose = read('compose.yaml')
    for (const line of ['# PEPPER_KEYS_FILE: /run/secrets/pepper_keys', '# HMAC_KEYS_FILE: /run/secrets/hmac_keys', '#   - pepper_keys', '#   - hmac_keys']) {
      assert.ok(compose.includes(line), `compose.yaml: ${line}`)
    }
  })

  it('the PKCS#11 example: the module read-only from the node, the PIN from a Secret mounted whole, where the commented env points', () => {
    const [secret] = parseAllDocuments(read(`${kubeDir}pkcs11-secret.example.yaml`)).map((d) => d.toJS() as Doc)
    assert.equal(secret.kind, 'Secret')
    assert.deepEqual(Object.keys(secret.stringData as object), ['pin'])
    const deployment = parseAllDocuments(enableCommented(read(`${kubeDir}deployment.yaml`))).map((d) => d.toJS() as Doc).find((d) => d.kind === 'Deployment')
    const container = deployment.spec.template.spec.containers[0]
    const env = Object.fromEntries((container.env as Doc[]).map((entry) => [entry.name, entry.value]))
    const mounts = container.volumeMounts as Doc[]
    const volumes = deployment.spec.template.spec.volumes as Doc[]
    const pinMount = mounts.find((each) => each.name === 'pkcs11-pin')
    const moduleMount = mounts.find((each) => each.name === 'pkcs11-module')
    assert.ok(pinMount && moduleMount, 'the commented pkcs11-pin and pkcs11-module mounts')
    assert.equal(pinMount.subPath, undefined, 'a subPath mount is never updated')
    assert.equal(pinMount.readOnly, true)
    assert.equal(moduleMount.readOnly, true)
    assert.equal(volumes.find((each) => each.name === 'pkcs11-pin')?.secret?.secretName, secret.metadata.name)
    assert.ok(volumes.find((each) => each.name === 'pkcs11-module')?.hostPath?.path, 'the module comes from a folder on the node')
    assert.equal(env.PKCS11_PIN_FILE, `${pinMount.mountPath}/pin`)
    assert.ok(String(env.PKCS11_MODULE).startsWith(`${moduleMount.mountPath}/`), 'PKCS11_MODULE is in the module mount')
    assert.equal(env.PKCS11_PIN, undefined, 'never a PIN in the environment')
    const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([, value]) => typeof value === 'string')) as Record<string, string>)
    assert.equal(config.pkcs11?.pinFile, '/etc/hashd-pkcs11/pin')
    assert.equal(config.pkcs11?.modulePath, env.PKCS11_MODULE)
  })

  it('the image carries keys:generate, audit:verify, audit:hash and bank:import, each importing dist/src only (never test/ or bench/)', () => {
    // The Dockerfile's instructions, each on one line (continuations joined).
    const copies = read('Dockerfile').replace(/\\\n\s*/g, ' ').split('\n').filter((line) => line.startsWith('COPY --from=build '))
    const dockerignore = read('.dockerignore').split('\n')
    for (const tool of ['keys-generate', 'audit-verify', 'audit-hash', 'bank-import']) {
      assert.ok(copies.some((line) => line.includes(` /app/dist/scripts/${tool}.js `) && line.endsWith(' dist/scripts/')), `${tool}.js is copied into the image`)
      const imports = [...read(`scripts/${tool}.ts`).matchAll(/^import [^'\n]*'([^']+)'/gm)].map((match) => match[1]!)
      assert.ok(imports.length > 0, tool)
      for (const from of imports) {
        assert.ok(from.startsWith('node:') || from.startsWith('../src/'), `scripts/${tool}.ts imports ${from}: the image has dist/src and node_modules only`)
      }
    }
    for (const entry of ['!src/', '!scripts/']) assert.ok(dockerignore.includes(entry), `.dockerignore lets ${entry.slice(1)} into the build context`)
  })

  it('compose.yaml: hashd and Redis wired, restart policies, healthchecks, a limit that holds the budget', () => {
    const compose = parseAllDocuments(read('compose.yaml'))[0]?.toJS() as Doc
    const { hashd, redis } = compose.services
    for (const service of [hashd, redis]) {
      assert.ok(service.restart, 'restart policy')
      assert.ok(service.healthcheck?.test, 'healthcheck')
    }
    assert.equal(new URL(hashd.environment.REDIS_URL as string).hostname, 'redis')
    assert.equal(hashd.depends_on.redis.condition, 'service_healthy')
    const config = loadConfig(hashd.environment as Record<string, string>)
    assert.ok(Number(/^(\d+)s$/.exec(hashd.stop_grace_period as string)?.[1]) * 1000 > config.shutdownTimeoutMs)
    assert.ok(Number(/^(\d+)m$/.exec(hashd.mem_limit as string)?.[1]) * MiB >= neededBytes(hashd.environment as Record<string, string>))
    assert.match(read('compose.yaml'), /^ *# API_KEYS_FILE: \/run\/secrets\/api_keys$/m)
  })

  it('compose.yaml: the banks folder mounted whole and read-only where SIMILARITY_BANKS_DIR points', () => {
    const { hashd } = (parseAllDocuments(read('compose.yaml'))[0]?.toJS() as Doc).services
    const folder = loadConfig(hashd.environment as Record<string, string>).similarityBanksDir
    assert.ok(folder, 'SIMILARITY_BANKS_DIR is set')
    const mounts = (hashd.volumes as string[]).map((volume) => volume.split(':'))
    const banks = mounts.find(([, target]) => target === folder)
    assert.ok(banks, `a volume mounted at ${folder}`)
    const [source, , mode] = banks
    assert.equal(mode, 'ro', 'hashd never writes a bank')
    // A folder, never a file: a bank is replaced by a rename, which a bind mount of one file would not see.
    assert.ok(source && !source.endsWith(BANK_EXTENSION), `${source} is a folder`)
    assert.ok(read('.gitignore').split('\n').includes(`/${posix.normalize(source)}/`), `the ${source} folder is in .gitignore`)
  })

  it('the banks examples: a ReadWriteMany claim the Deployment mounts read-only where SIMILARITY_BANKS_DIR points, written by an import Job of this image', () => {
    const version = (JSON.parse(read('package.json')) as { version: string }).version
    const [claim] = parseAllDocuments(read(`${kubeDir}banks-volume.example.yaml`)).map((d) => d.toJS() as Doc)
    assert.equal(claim.kind, 'PersistentVolumeClaim')
    assert.deepEqual(claim.spec.accessModes, ['ReadWriteMany'], 'every replica reads it while the Job writes, from any node')
    assert.ok(quantityBytes(claim.spec.resources.requests.storage) > 0)

    const deployment = parseAllDocuments(enableCommented(read(`${kubeDir}deployment.yaml`))).map((d) => d.toJS() as Doc).find((d) => d.kind === 'Deployment')
    const pod = deployment.spec.template.spec
    const container = pod.containers[0]
    const env = Object.fromEntries((container.env as Doc[]).map((entry) => [entry.name, entry.value]))
    const mount = (container.volumeMounts as Doc[]).find((each) => each.name === 'banks')
    const volume = (pod.volumes as Doc[]).find((each) => each.name === 'banks')
    assert.ok(mount && volume, 'the commented banks volume and mount')
    assert.equal(mount.readOnly, true)
    assert.equal(mount.subPath, undefined)
    assert.equal(volume.persistentVolumeClaim.claimName, claim.metadata.name)
    assert.equal(volume.persistentVolumeClaim.readOnly, true)
    const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([, value]) => typeof value === 'string')) as Record<string, string>)
    assert.equal(config.similarityBanksDir, mount.mountPath)

    const [job] = parseAllDocuments(read(`${kubeDir}bank-import-job.example.yaml`)).map((d) => d.toJS() as Doc)
    assert.equal(job.kind, 'Job')
    const jobPod = job.spec.template.spec
    assert.equal(jobPod.restartPolicy, 'Never')
    assert.deepEqual([jobPod.securityContext.runAsUser, jobPod.securityContext.runAsNonRoot], [pod.securityContext.runAsUser, true], 'written as the user that reads it')
    const jobVolumes = jobPod.volumes as Doc[]
    const jobBanks = jobVolumes.find((each) => each.persistentVolumeClaim?.claimName === claim.metadata.name)
    assert.ok(jobBanks, 'the Job mounts the banks claim')
    const importer = (jobPod.containers as Doc[])[0]
    assert.equal(importer.image, `hashd:${version}`, 'the image kustomization.yaml names')
    assert.equal(importer.securityContext.readOnlyRootFilesystem, true)
    const importerMount = (importer.volumeMounts as Doc[]).find((each) => each.name === jobBanks.name)
    assert.equal(importerMount.mountPath, mount.mountPath, 'the Job writes where the pods read')
    assert.notEqual(importerMount.readOnly, true)
    // node dist/scripts/bank-import.js INPUT BANK --type TYPE (scripts/bank-import.ts), BANK a NAME.bank of the folder.
    const [node, script, input, output, typeFlag, type] = importer.command as string[]
    assert.deepEqual([node, script, typeFlag], ['node', 'dist/scripts/bank-import.js', '--type'])
    assert.ok(type && isBankType(type), `--type ${type}`)
    assert.equal(dirname(output!), mount.mountPath)
    assert.ok(output!.endsWith(BANK_EXTENSION) && BANK_NAME.test(posix.basename(output!, BANK_EXTENSION)), `${output} is a bank hashd serves`)
    // The input is what the init container fetched, in a volume the two share.
    const inputMount = (importer.volumeMounts as Doc[]).find((each) => input!.startsWith(`${each.mountPath}/`))
    assert.ok(inputMount, `${input} is in a mount of the import container`)
    const fetch = (jobPod.initContainers as Doc[])[0]
    const fetchMount = (fetch.volumeMounts as Doc[]).find((each) => each.name === inputMount.name)
    assert.ok(fetchMount, 'the init container writes the input volume')
    const fetchArgs = fetch.args as string[]
    assert.equal(fetchArgs[fetchArgs.indexOf('--output') + 1], `${fetchMount.mountPath}${input!.slice(inputMount.mountPath.length)}`, 'the fetched file is the one imported')
    assert.ok(fetchArgs.includes('--fail'), 'an HTTP error fails the Job instead of importing the error page')
  })
})

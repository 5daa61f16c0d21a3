/**
 * The supply chain, checked by tools hashd did not write:
 * - the CycloneDX SBOM of the production dependencies (@cyclonedx/cyclonedx-npm, the same command
 *   the Dockerfile runs into the image): valid CycloneDX by the tool's own schema validation, and
 *   listing exactly the production tree of package-lock.json (name, version, a purl; a hash, where
 *   it gives one, is the lockfile's sha512 integrity);
 * - lockfile-lint on package-lock.json: https only, the npm registry only, sha512 integrity, package
 *   names that match their URLs; and every entry has an integrity;
 * - shellcheck on every shell script of the project (skipped without it; CI installs it);
 * - install scripts: every dependency that has one is reviewed in package.json's allowScripts
 *   (npm 11 blocks the rest and warns), and npm itself, in a dry run of `npm ci` from the
 *   lockfile, warns of none.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { skipUnless } from './helpers/tools.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name)

interface LockEntry { version?: string, integrity?: string, resolved?: string, dev?: boolean, devOptional?: boolean, link?: boolean, hasInstallScript?: boolean }
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown> & { allowScripts?: Record<string, boolean> }

/** The production tree as installed here: lockfile entries neither dev nor dev-optional, present in node_modules (optional packages of other platforms are not). */
function productionTree(): Map<string, LockEntry> {
  const tree = new Map<string, LockEntry>()
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || entry.devOptional || entry.link || !existsSync(join(ROOT, path))) continue
    tree.set(`${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`, entry)
  }
  return tree
}

interface Component { group?: string, name: string, version: string, purl?: string, hashes?: Array<{ alg: string, content: string }>, components?: Component[] }

describe('supply chain', () => {
  it('the CycloneDX SBOM is valid and lists exactly the production dependencies of package-lock.json, with their package URLs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashd-sbom-'))
    try {
      const file = join(dir, 'sbom.cdx.json')
      // --validate: the tool checks its output against the CycloneDX JSON schema and fails otherwise.
      execFileSync(bin('cyclonedx-npm'), ['--omit', 'dev', '--output-format', 'JSON', '--validate', '--mc-type', 'application', '--output-file', file],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] })
      const sbom = JSON.parse(readFileSync(file, 'utf8')) as { bomFormat: string, specVersion: string, metadata: { component: { name: string } }, components: Component[] }
      assert.equal(sbom.bomFormat, 'CycloneDX')
      assert.match(sbom.specVersion, /^1\.[5-9]$/)
      assert.equal(sbom.metadata.component.name, 'hashd')
      const flat = (components: Component[]): Component[] => components.flatMap((component) => [component, ...flat(component.components ?? [])])
      const listed = new Map(flat(sbom.components).map((component) => [`${component.group ? `${component.group}/` : ''}${component.name}@${component.version}`, component]))
      const expected = productionTree()
      assert.deepEqual([...listed.keys()].sort(), [...expected.keys()].sort())
      for (const [key, component] of listed) {
        // The lockfile's integrity is sha512 in base64 (SRI); a hash the SBOM gives is the same digest in hex.
        const integrity = expected.get(key)?.integrity ?? ''
        assert.match(integrity, /^sha512-/, key)
        const sha512 = component.hashes?.find((hash) => hash.alg === 'SHA-512')?.content
        if (sha512 !== undefined) assert.equal(sha512, Buffer.from(integrity.slice('sha512-'.length), 'base64').toString('hex'), key)
        assert.match(component.purl ?? '', /^pkg:npm\//, key)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('lockfile-lint: https, the npm registry, sha512 integrity and matching names; every package has an integrity', () => {
    execFileSync(bin('lockfile-lint'), ['--path', 'package-lock.json', '--type', 'npm', '--allowed-hosts', 'npm', '--validate-https',
      '--validate-integrity', '--validate-package-names'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    // lockfile-lint checks the URLs that are there; npm leaves out the registry's own (`resolved`) where it is
    // configured to, so that a package comes from the registry npm is set to use. Each must still be pinned by its digest.
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === '' || entry.link) continue
      assert.match(entry.integrity ?? '', /^sha512-[A-Za-z0-9+/]{86}==$/, `${path} has no sha512 integrity`)
      if (entry.resolved !== undefined) assert.match(entry.resolved, /^https:\/\/registry\.npmjs\.org\//, path)
    }
  })

  it('every dependency with an install script is reviewed in allowScripts, by name', () => {
    const withScripts = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    assert.ok(withScripts.includes('koffi'), withScripts.join(' '))
    const policy = manifest.allowScripts ?? {}
    for (const name of withScripts) {
      // A pinned entry (koffi@3.3.4) matches nothing here: npm takes the version from the lockfile's
      // `resolved` URL, which this lockfile leaves out (see the test above); the lockfile's integrity
      // pins what is installed, and a new version arrives only through a reviewed lockfile change.
      assert.equal(typeof policy[name], 'boolean', `${name} has an install script that allowScripts does not cover: review it, then npm install-scripts approve --no-allow-scripts-pin ${name} (or deny)`)
    }
    for (const key of Object.keys(policy)) assert.ok(withScripts.includes(key), `allowScripts names ${key}, which has no install script any more (npm install-scripts prune)`)
  })

  it('a dry run of npm ci from the lockfile warns of no install script left unreviewed', () => {
    // The manifest without the project's own scripts: a dry run still runs `prepare` (the build).
    const dir = mkdtempSync(join(tmpdir(), 'hashd-npm-ci-'))
    try {
      const { scripts: _scripts, ...rest } = manifest
      writeFileSync(join(dir, 'package.json'), JSON.stringify(rest))
      writeFileSync(join(dir, 'package-lock.json'), readFileSync(join(ROOT, 'package-lock.json')))
      const dry = spawnSync('npm', ['ci', '--dry-run', '--offline', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'warn' } })
      assert.equal(dry.status, 0, dry.stderr)
      assert.doesNotMatch(`${dry.stdout}${dry.stderr}`, /install-scripts|allowScripts/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('shellcheck finds nothing in the project\'s shell scripts', { skip: skipUnless('shellcheck') }, () => {
    const scripts = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n')
      .filter((file) => file !== '' && existsSync(join(ROOT, file)) && /^#!.*\b(ba)?sh\b/.test(readFileSync(join(ROOT, file), 'utf8').split('\n', 1)[0] ?? ''))
    assert.ok(scripts.includes('.ci/run') && scripts.includes('scripts/schemathesis.sh'), scripts.join(' '))
    // -x follows sourced files; every severity, style included.
    execFileSync('shellcheck', ['-x', ...scripts], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  })
})

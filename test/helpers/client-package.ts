/**
 * The TypeScript client as its users get it: `npm pack` in clients/typescript (its prepack
 * compiles it to dist/), then the tarball installed with npm into a fresh folder outside the
 * repository, which has nothing else of hashd's. Programs written there import `@hashd/client`
 * and run with this process's Node (so on Node 20 and on Node 24, as CI runs the suite on both);
 * TypeScript ones are compiled first with the repository's tsc, against the package's own
 * declarations (and Node's types, for process and node:fs).
 *
 * The dependency, openapi-fetch, comes from the npm registry (`--prefer-offline`: from npm's cache
 * when `npm ci` has put it there).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
export const CLIENT_DIR = join(ROOT, 'clients', 'typescript')
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

export interface Outcome { code: number, stdout: string, stderr: string }

/** Runs a program without blocking the event loop (a server under test may run in this process). */
export function runProgram(command: string, args: string[], options: { cwd: string, env?: NodeJS.ProcessEnv, timeoutMs?: number }): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: options.cwd, env: options.env ?? process.env, encoding: 'utf8', timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }))
  })
}

export interface InstalledClient {
  /** The consumer folder, outside the repository, with @hashd/client in its node_modules. */
  dir: string
  /** The tarball npm pack made, and what npm said it holds. */
  tarball: string
  files: string[]
  /** Compiles the .ts files written in `dir` (tsc, strict), into `dir/out`; rejects with tsc's report. */
  compile(): Promise<void>
  /** Runs a program of `dir` with this process's Node. */
  run(file: string, env?: Record<string, string>): Promise<Outcome>
  remove(): void
}

async function npm(args: string[], cwd: string): Promise<Outcome> {
  const outcome = await runProgram('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' } })
  if (outcome.code !== 0) throw new Error(`npm ${args.join(' ')} failed in ${cwd}: ${outcome.stderr.slice(-3000)}`)
  return outcome
}

/** Packs the client, and installs the tarball in a new folder of the system's temporary directory. */
export async function installClient(): Promise<InstalledClient> {
  const dir = mkdtempSync(join(tmpdir(), 'hashd-client-consumer-'))
  const packs = mkdtempSync(join(tmpdir(), 'hashd-client-pack-'))
  try {
    const packed = JSON.parse((await npm(['pack', '--json', '--pack-destination', packs], CLIENT_DIR)).stdout) as Array<{ filename: string, files: Array<{ path: string }> }>
    const tarball = join(packs, packed[0]!.filename)
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'hashd-client-consumer', private: true, type: 'module' }, null, 2)}\n`)
    await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], dir)
    writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], strict: true, skipLibCheck: true,
        outDir: 'out', rootDir: '.', types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')],
      },
      include: ['*.ts'],
    }, null, 2)}\n`)
    return {
      dir, tarball, files: packed[0]!.files.map((file) => file.path).sort(),
      async compile() {
        const outcome = await runProgram(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: dir })
        if (outcome.code !== 0) throw new Error(`tsc failed:\n${outcome.stdout}${outcome.stderr}`)
      },
      run: (file, env = {}) => runProgram(process.execPath, [file], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env } }),
      remove() {
        rmSync(dir, { recursive: true, force: true })
        rmSync(packs, { recursive: true, force: true })
      },
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    rmSync(packs, { recursive: true, force: true })
    throw error
  }
}

/** The version clients/typescript/package.json gives. */
export const clientPackageVersion = (): string => (JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as { version: string }).version

/**
 * `npm run faults` as an operator runs it, for the fault tests: the CLI in its own
 * process, and the results file it wrote. Exit status 1 is a row or a check that
 * failed (the results say which, and the test asserts on them); any other failure
 * (2: no root, no iptables, bad options; a crash) is a harness error, thrown with
 * the end of stderr.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface FaultsRun<T> {
  exit: 0 | 1
  stdout: string
  /** The results file (`--out`), parsed. */
  result: T
}

export async function runFaults<T>(args: string[]): Promise<FaultsRun<T>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tep-faults-'))
  const out = path.join(dir, 'result.json')
  try {
    const { exit, stdout } = await promisify(execFile)(process.execPath, ['tools/faults/src/main.ts', ...args, '--out', out], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }).then(
      (r) => ({ exit: 0 as const, stdout: r.stdout }),
      (err: { code?: number; stderr?: string; stdout?: string }) => {
        if (err.code !== 1) throw new Error(`npm run faults ${args.join(' ')} exited ${err.code}: ${err.stderr?.slice(-3000)}`, { cause: err })
        return { exit: 1 as const, stdout: err.stdout ?? '' }
      },
    )
    return { exit, stdout, result: JSON.parse(readFileSync(out, 'utf8')) as T }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

// The import boundaries of eslint.config.js, checked through ESLint's own API on
// code that is linted as if it sat at the given path of this repository.
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const RULE = '@typescript-eslint/no-restricted-imports'
const eslint = new ESLint({ cwd: ROOT })

async function restrictions(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${filePath}` })
  expect(result!.messages.filter((m) => m.fatal)).toEqual([])
  return result!.messages.filter((m) => m.ruleId === RULE).map((m) => m.message)
}

const SERVICE_FILE = 'services/refresher/src/boundary-probe.ts'
const LIB_FILE = 'libs/kafka/src/deep/boundary-probe.ts'

// ESLint loads the TypeScript parser and the config on first use; the shared machine can be slow.
describe('the lint rule on production code (libs/, services/)', { timeout: 60_000 }, () => {
  it.each([
    ['@tep/sim-data', "import { Rng } from '@tep/sim-data'"],
    ['@tep/sample-traffic', "export { sampleTraffic } from '@tep/sample-traffic'"],
    ['@tep/enrichment-sim', "import type { Sim } from '@tep/enrichment-sim'"],
    ['@tep/bank-sim', "import { startBankSim } from '@tep/bank-sim'"],
  ])('refuses the simulator package %s', async (_name, code) => {
    const messages = await restrictions(`${code}\n`, SERVICE_FILE)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(/must not depend on a simulator package/)
  })

  it("refuses a simulator's src/ for both reasons", async () => {
    const messages = await restrictions("import { x } from '@tep/bank-sim/src/server.ts'\n", SERVICE_FILE)
    expect(messages).toEqual([
      expect.stringMatching(/another package's internals/),
      expect.stringMatching(/must not depend on a simulator package/),
    ])
  })

  it('refuses a relative path into simulators/', async () => {
    const messages = await restrictions(
      "import { world } from '../../../simulators/data/src/world.ts'\n",
      SERVICE_FILE,
    )
    expect(messages).toEqual([expect.stringMatching(/must not import from simulators\//)])
  })

  it("refuses another package's src/ by name, naming the public entry point instead", async () => {
    const messages = await restrictions(
      "import { backoffDelay } from '@tep/kafka/src/retry-policy.ts'\n",
      SERVICE_FILE,
    )
    expect(messages).toEqual([expect.stringMatching(/another package's internals.*public entry point/)])
  })

  it('refuses a subpath of a workspace package', async () => {
    const messages = await restrictions("import { x } from '@tep/http/internal'\n", LIB_FILE)
    expect(messages).toEqual([expect.stringMatching(/subpath of a workspace package/)])
  })

  it('refuses a relative path that climbs out of the package', async () => {
    for (const source of ['../../../http/src/http-client.ts', '../../../../services/refresher/src/main.ts']) {
      const messages = await restrictions(`import { x } from '${source}'\n`, LIB_FILE)
      expect(messages, source).toEqual([expect.stringMatching(/climbs out of this package/)])
    }
  })

  it("lets through public entry points, the package's own files and node/npm modules", async () => {
    const code = [
      "import { createTransactionalPipeline } from '@tep/kafka'",
      "import { HttpClient } from '@tep/http'",
      "import { validatePipelineOptions } from '../pipeline-options.ts'",
      "import { KafkaConfigError } from '../../src/errors.ts'",
      "import { readFile } from 'node:fs/promises'",
      "import { Admin } from '@platformatic/kafka'",
      'export { createTransactionalPipeline, HttpClient, validatePipelineOptions, KafkaConfigError, readFile, Admin }',
      '',
    ].join('\n')
    expect(await restrictions(code, LIB_FILE)).toEqual([])
  })
})

describe('the lint rule elsewhere (tests, simulators, scripts)', { timeout: 60_000 }, () => {
  it("refuses another package's src/ also in tests", async () => {
    const messages = await restrictions(
      "import { createPlatformaticPipeline } from '@tep/kafka/src/platformatic/eos-pipeline.ts'\n",
      'test/kafka/boundary-probe.test.ts',
    )
    expect(messages).toEqual([expect.stringMatching(/another package's internals/)])
  })

  it('lets tests and the demo use the simulators', async () => {
    const code = "import { startBankSim } from '@tep/bank-sim'\nexport { startBankSim }\n"
    expect(await restrictions(code, 'test/bank-sim/boundary-probe.test.ts')).toEqual([])
    expect(await restrictions(code, 'scripts/start/boundary-probe.ts')).toEqual([])
  })
})

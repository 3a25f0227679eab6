import { defineConfig } from 'vitest/config'

// Two projects: `unit` tests sit beside their module and need nothing running;
// `integration` tests live in test/ and get a real Kafka broker and schema
// registry from test/setup/global-setup.ts (testcontainers, local processes, or
// an external stack named by KAFKA_BROKERS and SCHEMA_REGISTRY_URL).
export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{schemas,deploy,libs,services,simulators}/**/src/**/*.test.ts', 'schemas/**/*.test.ts', 'scripts/**/*.test.ts', 'tools/**/src/**/*.test.ts'],
          exclude: ['**/node_modules/**'],
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**'],
          globalSetup: ['test/setup/global-setup.ts'],
          // Two JVMs share two cores with the tests: one file at a time keeps timing sane.
          fileParallelism: false,
          testTimeout: 90_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})

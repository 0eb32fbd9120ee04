import { defineConfig } from 'vitest/config';

// Three projects, by directory, each test file in exactly one of them
// (test/unit/test-projects.test.ts holds that):
// - unit: code run in the test's own process, through the command seam where a
//   command is the subject (`npm run test:quick`);
// - e2e: the CLI as a process, where the process is the subject, and the
//   sandbox and hostile servers it meets (`npm test` runs unit and e2e);
// - heavy: scale (a million images, 250,000 rows), memory, the packed package
//   installed on each Node line, Slurm, Chromium and the Nu checker
//   (`npm run test:all` runs all three; CI runs it on Node 24).
const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // End-to-end tests spawn processes and servers; two cores do not gain from more workers.
  pool: 'forks',
} as const;

export default defineConfig({
  test: {
    // Once per run, whichever projects run: the root's, never a project's.
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      { test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'] } },
      { test: { ...shared, name: 'e2e', include: ['test/e2e/**/*.test.ts', 'test/hostile/**/*.test.ts', 'test/sandbox/**/*.test.ts'] } },
      { test: { ...shared, name: 'heavy', include: ['test/heavy/**/*.test.ts'] } },
    ],
  },
});

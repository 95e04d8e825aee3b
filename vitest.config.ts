import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Rebuilds a stale dist/, so the processes the tests start run the current code as it ships.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Timing tests measure real sockets; keep files from competing for the 2 cores.
    fileParallelism: false,
  },
});

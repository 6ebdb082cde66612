import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql ships both .mjs and .js builds; Vite would pick the .mjs for our sources while
    // Apollo and graphql-tools load the .js through Node, and two copies of graphql reject each
    // other's schema objects ("from another module or realm"). One copy for everybody:
    alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'mocks/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});

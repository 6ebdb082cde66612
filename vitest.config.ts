import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

/** The behaviour suite: black-box tests written against a base URL and fetch (test/support/target.ts). */
const BEHAVIOUR = 'test/behaviour/**/*.test.ts';
/** Tests on real engines (CONTRACT section 13): PostgreSQL below HTTP, and several processes on PostgreSQL and Redis. */
const POSTGRES = 'test/postgres/**/*.test.ts';
const CLUSTER = 'test/cluster/**/*.test.ts';

export default defineConfig({
  resolve: {
    // graphql ships both .mjs and .js builds; Vite would pick the .mjs for our sources while
    // Apollo and graphql-tools load the .js through Node, and two copies of graphql reject each
    // other's schema objects ("from another module or realm"). One copy for everybody:
    alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }],
  },
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Every project extends this file (resolve.alias and the timeouts above); vitest prefixes each
    // test's name with its project's, so a failure says which target it failed on.
    projects: [
      {
        extends: true,
        test: {
          name: 'default',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'mocks/**/*.test.ts'],
          exclude: ['**/node_modules/**', BEHAVIOUR, 'test/browser/**', 'test/consumer/**', POSTGRES, CLUSTER],
        },
      },
      // One behaviour suite, several targets (CONTRACT section 11): the same files against the real
      // server over HTTP and against the MSW mocks; startTarget reads `target` with inject().
      { extends: true, test: { name: 'behaviour:server', include: [BEHAVIOUR], provide: { target: 'server' } } },
      { extends: true, test: { name: 'behaviour:mocks', include: [BEHAVIOUR], provide: { target: 'mocks' } } },
      // The real server on the store `npm start` runs: the journal-backed store of a (temporary) data directory.
      { extends: true, test: { name: 'behaviour:durable', include: [BEHAVIOUR], provide: { target: 'durable' } } },
      // Once more on the mocks as the package ships them (dist/mocks, built once by the global setup).
      {
        extends: true,
        test: { name: 'behaviour:package', include: [BEHAVIOUR], provide: { target: 'mocks', mocksFrom: 'package' }, globalSetup: ['test/consumer/build-package.ts'] },
      },
      // The same suite against the real server on PostgreSQL (CONTRACT section 13): one PostgreSQL
      // for the project (test/engines/setup.ts), a database of its own for each file.
      {
        extends: true,
        test: { name: 'behaviour:postgres', include: [BEHAVIOUR], provide: { target: 'postgres' }, globalSetup: ['test/engines/setup.ts'] },
      },
      { extends: true, test: { name: 'postgres', include: [POSTGRES], globalSetup: ['test/engines/setup.ts'] } },
      // Each file starts the engines it needs, since some of its tests stop and start them.
      { extends: true, test: { name: 'cluster', include: [CLUSTER], testTimeout: 120_000, hookTimeout: 120_000 } },
      // The limits stories once more with the limiter's state in a real redis-server (CONTRACT section 13).
      {
        extends: true,
        test: {
          name: 'behaviour:redis',
          include: ['test/behaviour/limits/**/*.test.ts', 'test/behaviour/graphql/limits.test.ts'],
          provide: { target: 'server' },
          globalSetup: ['test/engines/redis-global-setup.ts'],
        },
      },
      // The example page in Debian's Chromium, on the mocks and on a real server (test/browser).
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 } },
      // The packed package installed in a project of its own, outside this tree (test/consumer):
      // its app/ directory is that project's, never a test of ours.
      { extends: true, test: { name: 'consumer', include: ['test/consumer/consumer.test.ts'], testTimeout: 180_000, hookTimeout: 300_000 } },
    ],
  },
});

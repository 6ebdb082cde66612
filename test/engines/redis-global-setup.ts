/**
 * vitest globalSetup for a project that runs on Redis: one redis-server for the project's run
 * (test/engines/redis.ts), its URL provided as `redisUrl`, removed when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { startRedis } from './redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** redis://127.0.0.1:<port> of the project's redis-server, when it runs on one. */
    redisUrl?: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startRedis();
  project.provide('redisUrl', redis.url);
  return () => redis.remove();
}

/**
 * The two Node globals Apollo Server's core still touches in a browser: `Buffer` (its request
 * parsing checks `Buffer.isBuffer`) and `process.env` (read for APOLLO_* settings). Imported by
 * mocks/browser.ts before anything that loads Apollo.
 */
import { Buffer } from 'buffer';

const g = globalThis as { Buffer?: unknown; process?: { env?: Record<string, string | undefined> } };
g.Buffer ??= Buffer;
g.process ??= { env: {} };
g.process.env ??= {};

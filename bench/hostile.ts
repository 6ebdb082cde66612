/**
 * Hostile GraphQL documents within the 64 KiB body limit (issue 9): 2,500 repeated selections, a
 * 1,500-fragment chain, 3,800 aliases. Each is sent SENDS times, one after another (each time a
 * new text, so no cache answers it), while the
 * server's own 10 ms poller (bench/loop-probe.mjs) watches its event loop. A document passes
 * when every answer is the contract's refusal (400, `QUERY_TOO_COMPLEX`: section 8's 3,000-token
 * rule) and the 90th percentile of the time to answer, measured by the client, is at most
 * MAX_ANSWER_MS; the longest stall the poller saw is printed beside it.
 */
import { quantile } from './measure.js';
import type { Child } from './processes.js';
import type { Fixture } from './setup.js';

export const MAX_ANSWER_MS = 10;
const SENDS = 20;
const BODY_LIMIT = 64 * 1024;

export interface HostileResult {
  name: string;
  bytes: number;
  p50: number;
  p90: number;
  max: number;
  maxStallMs: number | undefined;
  /** Answers that were not the expected refusal, with the first one's text. */
  unexpected: number;
  firstUnexpected?: string;
  pass: boolean;
}

/** Base-36 aliases keep 3,800 of them inside 64 KiB. */
const alias = (i: number) => `a${i.toString(36)}`;

export const hostileDocuments: { name: string; query: string }[] = [
  { name: '2,500 repeated selections', query: `{ pet(id: "1") { ${'name '.repeat(2_500)}} }` },
  {
    name: '1,500-fragment chain',
    query: `{ pet(id: "1") { ...F0 } } ${Array.from({ length: 1_500 }, (_, i) => `fragment F${i} on Pet { id${i < 1_499 ? ` ...F${i + 1}` : ''} }`).join(' ')}`,
  },
  { name: '3,800 aliases', query: `{ ${Array.from({ length: 3_800 }, (_, i) => `${alias(i)}:__typename`).join(' ')} }` },
];

/** The longest stall the server's poller saw since its last report (SIGUSR2; see loop-probe.mjs). */
export function probeStall(server: Child, lines: string[]): Promise<number | undefined> {
  const before = lines.length;
  server.proc.kill('SIGUSR2');
  return new Promise((resolve) => {
    const started = Date.now();
    const poll = setInterval(() => {
      const line = lines.slice(before).find((l) => l.startsWith('loop-probe max-stall-ms '));
      if (line || Date.now() - started > 2_000) {
        clearInterval(poll);
        resolve(line ? Number(line.split(' ')[2]) : undefined);
      }
    }, 5);
  });
}

export async function measureHostile(server: Child, fx: Fixture, probeLines: string[]): Promise<HostileResult[]> {
  const out: HostileResult[] = [];
  for (const doc of hostileDocuments) {
    // Every send is a new text (a comment at the end), so no per-document cache answers it: a
    // hostile client varies its documents.
    const bodyOf = (i: number) => JSON.stringify({ query: `${doc.query} #${i}` });
    const body = bodyOf(SENDS);
    if (Buffer.byteLength(body) > BODY_LIMIT) throw new Error(`${doc.name}: ${Buffer.byteLength(body)} bytes, over 64 KiB`);
    await probeStall(server, probeLines); // start the poller's window here
    const times: number[] = [];
    let unexpected = 0;
    let firstUnexpected: string | undefined;
    for (let i = 0; i < SENDS; i++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'X-API-Key': fx.staffKey, 'Content-Type': 'application/json' },
        body: bodyOf(i),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      times.push(performance.now() - t0);
      let code: unknown;
      try {
        code = (JSON.parse(text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code;
      } catch {
        code = undefined;
      }
      if (res.status !== 400 || code !== 'QUERY_TOO_COMPLEX') {
        unexpected++;
        firstUnexpected ??= `${res.status} ${text.slice(0, 200)}`;
      }
    }
    const maxStallMs = await probeStall(server, probeLines);
    const sorted = Float64Array.from(times).sort();
    const p90 = quantile(sorted, 0.9);
    out.push({
      name: doc.name,
      bytes: Buffer.byteLength(body),
      p50: quantile(sorted, 0.5),
      p90,
      max: sorted[sorted.length - 1]!,
      maxStallMs,
      unexpected,
      firstUnexpected,
      pass: unexpected === 0 && p90 <= MAX_ANSWER_MS,
    });
  }
  return out;
}

/**
 * Hostile GraphQL documents within the 64 KiB body limit (issue 9): 2,500 repeated selections, a
 * 1,500-fragment chain, 3,800 aliases; and (issue 18) a list nested 2,500 deep and a cost set by a
 * variable's default. Each is sent SENDS times, one after another (each time a new text, so no
 * cache answers it), while the server's own 10 ms poller (bench/loop-probe.mjs) watches its
 * event loop. A document passes when every answer is the contract's refusal (400,
 * `QUERY_TOO_COMPLEX`: section 8's token, nesting and cost rules) and the 90th percentile of the
 * time to answer, measured by the client, is at most MAX_ANSWER_MS; the longest stall the poller
 * saw is printed beside it.
 *
 * The client is node:http on one kept-alive connection, as autocannon's is: fetch (undici) added
 * 1-5 ms of its own to every send on this machine, more than the server took to refuse.
 */
import http from 'node:http';
import { quantile } from './measure.js';
import type { Child } from './processes.js';
import type { Fixture } from './setup.js';

export const MAX_ANSWER_MS = 10;
/**
 * 100 sends, so that the 90th percentile is an estimate and not the third-slowest answer: the
 * first sends to a process meet V8's interpreter (and a scavenge or a mark-compact now and then);
 * the first one and the number over MAX_ANSWER_MS are reported beside it.
 */
export const SENDS = 100;
const BODY_LIMIT = 64 * 1024;

export interface HostileResult {
  name: string;
  bytes: number;
  p50: number;
  p90: number;
  max: number;
  /** The first send's time (the process had not parsed a document of this shape before). */
  first: number;
  /** Sends answered later than MAX_ANSWER_MS. */
  over: number;
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
  // Issue 18: a list argument nested 2,500 deep (the parser would recurse into it), and a cost
  // that only the variable's default makes too high (20,401).
  { name: 'a list nested 2,500 deep', query: `{ pets(ids: ${'['.repeat(2_500)}"1"${']'.repeat(2_500)}) { totalCount } }` },
  {
    name: "first by a variable's default (cost 20,401)",
    query: 'query($n: Int = 100) { pets(first: $n) { edges { node { category { pets(first: $n) { edges { cursor } } } } } } }',
  },
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

/** One POST on `agent`'s kept-alive connection; resolves with the whole answer (10 s at most). */
function post(agent: http.Agent, url: string, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, timeout: 10_000, headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 10 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export async function measureHostile(server: Child, fx: Fixture, probeLines: string[]): Promise<HostileResult[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    return await measureWith(agent, server, fx, probeLines);
  } finally {
    agent.destroy();
  }
}

async function measureWith(agent: http.Agent, server: Child, fx: Fixture, probeLines: string[]): Promise<HostileResult[]> {
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
      const sent = bodyOf(i);
      const t0 = performance.now();
      const res = await post(agent, `${server.url}/graphql`, fx.staffKey, sent);
      times.push(performance.now() - t0);
      const { text } = res;
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
      first: times[0]!,
      over: times.filter((t) => t > MAX_ANSWER_MS).length,
      maxStallMs,
      unexpected,
      firstUnexpected,
      pass: unexpected === 0 && p90 <= MAX_ANSWER_MS,
    });
  }
  return out;
}

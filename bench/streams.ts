/**
 * The event-stream row of `npm run bench` (issue 20): 1,000 open `GET /events/stream` streams on one
 * server process (as `npm start` runs it, on a data directory), then new events written one at a
 * time; each must reach every stream within 100 ms at p99 (from the moment its POST is sent to the
 * moment its frame arrives here), each open stream may hold at most 50 kB of the server's memory
 * (RSS with 1,000 open over RSS with none, both after a full collection), and the event loop may
 * stall at most 20 ms while it fans out (monitorEventLoopDelay inside the server, bench/stream-probe.mjs).
 *
 * A server takes at most 256 connections from one address (CONTRACT section 12), so the streams
 * come from 127.0.0.1-127.0.0.4 (all loopback on Linux); a key holds at most 100 open streams
 * (enterprise), so ten keys share them. Everything is bounded: STREAMS streams, EVENTS events.
 */
import http from 'node:http';
import { join } from 'node:path';
import { intEnv } from './env.js';
import { startChild, stopChild, type Child } from './processes.js';
import { int, ms, type Row } from './report.js';
import { BENCH_DIR, newAdminKey, ROOT, SERVER_CPU, tempDir } from './servers.js';

const STREAMS = intEnv('BENCH_STREAMS', 1_000, 10, 2_000);
const EVENTS = intEnv('BENCH_STREAM_EVENTS', 30, 5, 200);
const KEYS = Math.ceil(STREAMS / 100);
const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
/** Between two events: every stream has its frame long before. */
const GAP_MS = 150;
const MAX_P99_MS = 100;
const MAX_BYTES_PER_STREAM = 50 * 1000;
const MAX_STALL_MS = 20;
const PROBE = join(BENCH_DIR, 'stream-probe.mjs');

export interface Probe {
  eldMaxMs: number;
  eldP99Ms: number;
  rss: number;
  heap: number;
  /** The longest stall during which the main thread was running (10 ms CPU ticks): the code's, not the machine's. */
  busyMaxMs: number;
}

/** One stream as this process reads it: the arrival time of each event's frame, by sequence. */
interface Reader {
  req: http.ClientRequest;
  arrived: Map<number, number>;
  tail: string;
  ended: boolean;
}

/**
 * The real server on a fresh data directory, as startServer runs it, with this row's probe loaded
 * (the event loop's delay, a full GC after each report); the webhook row starts its server so too.
 */
export function startProbedServer(what: string, adminKey: string, pin: boolean, env: Record<string, string> = {}) {
  return startChild({
    name: `petstore server (${what})`,
    args: ['--expose-gc', '--import', PROBE, 'bin/start.mjs'],
    cwd: ROOT,
    cpu: pin ? SERVER_CPU : undefined,
    timeoutMs: 60_000,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      PETSTORE_DATA_DIR: tempDir(`petstore-bench-${what.replace(/\W+/g, '-')}-`),
      PETSTORE_ADMIN_KEY: adminKey,
      PETSTORE_SEED: 'false',
      PETSTORE_LOG_LEVEL: 'warn',
      ...env,
    },
  });
}

export async function streamRows(pin: boolean): Promise<Row[]> {
  const adminKey = newAdminKey();
  const server = await startProbedServer('event streams', adminKey, pin);
  const lines: string[] = [];
  server.onLine((l) => lines.push(l));
  const readers: Reader[] = [];
  try {
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      const res = await json(server.url, 'POST', '/admin/keys', adminKey, { name: `streams ${i}`, role: 'staff', plan: 'enterprise', perMinute: 100_000, perDay: 10_000_000 });
      keys.push((res as { key: string }).key);
    }
    // Warm the write and read paths, then the memory with no stream open (after a collection).
    for (let i = 0; i < 20; i++) await json(server.url, 'POST', '/categories', adminKey, { name: `warm-up ${i}` });
    await probe(server, lines);
    await sleep(300);
    const idle = await probe(server, lines);

    const openStart = performance.now();
    const opened = await Promise.all(Array.from({ length: STREAMS }, (_, i) => openReader(server.url, keys[i % KEYS]!, ADDRESSES[i % ADDRESSES.length]!)));
    readers.push(...opened);
    const openMs = performance.now() - openStart;
    await sleep(300);
    await probe(server, lines); // a collection with every stream open
    await sleep(300);
    const open = await probe(server, lines);
    const rssPerStream = (open.rss - idle.rss) / STREAMS;
    const heapPerStream = (open.heap - idle.heap) / STREAMS;

    // The fan-out: one event at a time. The streams started with the next new event, and only these
    // POSTs write: the i-th sequence any stream saw is the i-th POST's event.
    const sent: number[] = [];
    const answered: number[] = [];
    const cpuBefore = server.cpuMs();
    for (let i = 0; i < EVENTS; i++) {
      sent.push(performance.now());
      await json(server.url, 'POST', '/categories', adminKey, { name: `fan-out ${i}` });
      answered.push(performance.now());
      await sleep(GAP_MS);
    }
    await sleep(500);
    const cpuAfter = server.cpuMs();
    const fanOut = await probe(server, lines);
    // The server's CPU time for the fan-out (its POSTs included) per delivery: unlike latencies, other load on the machine hardly moves it.
    const cpuUsPerDelivery = cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / (EVENTS * STREAMS);
    const sequences = [...new Set(readers.flatMap((r) => [...r.arrived.keys()]))].sort((a, b) => a - b);
    if (sequences.length !== EVENTS) throw new Error(`the streams saw ${sequences.length} events, ${EVENTS} were written`);

    // An event exists from its commit, which is before both its POST's answer and its first frame
    // anywhere: the earlier of the two stands for it (a bound that errs toward a longer delivery by
    // at most the answer's way back). The time from the POST sent (the durable write included) is printed too.
    const fromCommit: number[] = [];
    const fromSent: number[] = [];
    const writes: number[] = [];
    let missing = 0;
    sequences.forEach((seq, i) => {
      const arrivals = readers.map((r) => r.arrived.get(seq));
      const first = Math.min(...arrivals.filter((t): t is number => t !== undefined));
      const committed = Math.min(answered[i]!, first);
      writes.push(answered[i]! - sent[i]!);
      for (const at of arrivals) {
        if (at === undefined) missing++;
        else {
          fromCommit.push(at - committed);
          fromSent.push(at - sent[i]!);
        }
      }
    });
    const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? Number.NaN;
    const p99 = pct(fromCommit, 99);
    const ended = readers.filter((r) => r.ended).length;
    console.log(
      `  event streams: ${STREAMS} open in ${int(openMs)} ms; ${EVENTS} events, delivery from commit p50 ${ms(pct(fromCommit, 50))} ms, p99 ${ms(p99)} ms, max ${ms(pct(fromCommit, 100))} ms ` +
        `(from the POST sent: p50 ${ms(pct(fromSent, 50))}, p99 ${ms(pct(fromSent, 99))} ms; the POST itself p50 ${ms(pct(writes, 50))}, max ${ms(pct(writes, 100))} ms), ${missing} missing, ${ended} ended early; ` +
        `RSS ${(rssPerStream / 1000).toFixed(1)} kB/stream, heap ${(heapPerStream / 1000).toFixed(1)} kB/stream; longest stall during fan-out ${ms(fanOut.eldMaxMs)} ms (p99 ${ms(fanOut.eldP99Ms)} ms, the thread running for ${ms(fanOut.busyMaxMs)} ms of it at most); server CPU ${cpuUsPerDelivery?.toFixed(1) ?? '-'} µs per delivery`,
    );
    const pass = p99 <= MAX_P99_MS && rssPerStream <= MAX_BYTES_PER_STREAM && fanOut.eldMaxMs <= MAX_STALL_MS;
    return [
      {
        name: `${int(STREAMS)} open event streams (GET /events/stream) on one process, ${EVENTS} events fanned out`,
        figure: `p99 ${ms(p99)} ms; ${(rssPerStream / 1000).toFixed(1)} kB/stream; stall ${ms(fanOut.eldMaxMs)} ms`,
        target: `p99 <= ${MAX_P99_MS} ms; <= ${MAX_BYTES_PER_STREAM / 1000} kB; stall <= ${MAX_STALL_MS} ms`,
        pass,
        detail:
          `delivery from the commit (the earlier of the POST's answer and the event's first frame) to the frame received, ${int(fromCommit.length)} deliveries: p50 ${ms(pct(fromCommit, 50))} ms, p90 ${ms(pct(fromCommit, 90))} ms, max ${ms(pct(fromCommit, 100))} ms; ` +
          `from the POST sent: p50 ${ms(pct(fromSent, 50))} ms, p99 ${ms(pct(fromSent, 99))} ms (the durable POST itself: p50 ${ms(pct(writes, 50))} ms, max ${ms(pct(writes, 100))} ms); ` +
          `${STREAMS} streams opened in ${int(openMs)} ms from ${ADDRESSES.length} loopback addresses with ${KEYS} enterprise keys; ` +
          `RSS ${mibOf(idle.rss)} idle, ${mibOf(open.rss)} with the streams open (after a full GC each), heap ${(heapPerStream / 1000).toFixed(1)} kB/stream; ` +
          `event loop during the fan-out (monitorEventLoopDelay): max ${ms(fanOut.eldMaxMs)} ms, p99 ${ms(fanOut.eldP99Ms)} ms; longest stall with the main thread running (its CPU ticks) ${ms(fanOut.busyMaxMs)} ms; ` +
          `server CPU during the fan-out ${cpuUsPerDelivery?.toFixed(1) ?? '-'} µs per delivery (its POSTs included)`,
        unexpected: missing + ended,
      },
    ];
  } finally {
    for (const r of readers) r.req.destroy();
    await stopChild(server);
  }
}

const mibOf = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const sleep = (msecs: number) => new Promise((r) => setTimeout(r, msecs));

/** Asks the server's probe for its report (and a collection after it); see stream-probe.mjs. */
export function probe(server: Child, lines: string[]): Promise<Probe> {
  const before = lines.length;
  server.proc.kill('SIGUSR2');
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      const line = lines.slice(before).find((l) => l.startsWith('stream-probe '));
      if (!line && Date.now() - started < 5_000) return;
      clearInterval(poll);
      if (!line) return reject(new Error('the server\'s stream probe did not answer'));
      const f = line.split(' ');
      resolve({ eldMaxMs: Number(f[2]), eldP99Ms: Number(f[4]), rss: Number(f[6]), heap: Number(f[8]), busyMaxMs: Number(f[10]) });
    }, 5);
  });
}

/** One JSON request; rejects on any status but 200/201. */
function json(base: string, method: string, path: string, key: string, body?: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(`${base}${path}`, { method, agent: false, headers: { 'x-api-key': key, ...(data && { 'content-type': 'application/json' }) }, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 || res.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    req.on('error', reject);
    req.end(data);
  });
}

/** Opens one stream from `localAddress`; resolves once its head and first frame have arrived. */
function openReader(base: string, key: string, localAddress: string): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const r: Reader = { req: undefined as unknown as http.ClientRequest, arrived: new Map(), tail: '', ended: false };
    r.req = http.get(`${base}/events/stream`, { agent: false, localAddress, headers: { 'x-api-key': key, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET /events/stream from ${localAddress}: ${res.statusCode}`));
        res.resume();
        return;
      }
      let first = true;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = performance.now();
        r.tail += chunk;
        let end: number;
        while ((end = r.tail.indexOf('\n\n')) >= 0) {
          const frame = r.tail.slice(0, end);
          r.tail = r.tail.slice(end + 2);
          if (frame.startsWith('id: evt_')) r.arrived.set(Number(frame.slice(8, frame.indexOf('\n'))), now);
        }
        if (first) {
          first = false;
          resolve(r);
        }
      });
      res.on('end', () => (r.ended = true));
      res.on('error', () => (r.ended = true));
    });
    r.req.on('error', reject);
  });
}

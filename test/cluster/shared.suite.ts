/**
 * Three gateway processes on one PostgreSQL and one Redis behave as one service (CONTRACT
 * section 13): one budget per key, one stock, bans and revocations everywhere at once, an
 * Idempotency-Key honoured by every process, ids unique and ascending, one statement per read;
 * events (section 14) in every gateway's feed and streams within a second of their commit through
 * any, and each webhook attempt made by exactly one gateway.
 * Run directly (shared.test.ts) and through PgBouncer in transaction pooling mode (pgbouncer.test.ts).
 */
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mustOpen, type FrameReader } from '../support/sse.js';
import { ADMIN, logged, makeKey, makePet, startCluster, within, type Cluster, type ClusterOptions, type Gateway } from './cluster.js';

export function sharedClusterSuite(title: string, opts: ClusterOptions = {}): void {
  let cluster: Cluster;
  let gw: Gateway[];

  beforeAll(async () => {
    // Redis commands get 2 s rather than 150 ms: on a loaded test machine a burst of 200 can hold a
    // gateway's event loop longer than that, and its fallback to its own limiter (tested in
    // faults.test.ts) would then be what is measured here instead of the shared budget.
    // Webhooks may reach the test's loopback receiver, and retry after at most a second.
    cluster = await startCluster(3, { PETSTORE_REDIS_TIMEOUT_MS: '2000', PETSTORE_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', PETSTORE_WEBHOOK_RETRY_BASE_SECONDS: '1' }, opts);
    gw = cluster.gateways;
  });
  afterAll(() => cluster?.stop());

  /** No gateway fell back to its own limiter (a Redis command over its timeout): the figures are the shared budget's. */
  async function expectOnRedis(): Promise<void> {
    for (const g of gw) {
      const metrics = (await g.admin.get('/metrics')).text;
      expect(/^petstore_limiter_fallbacks_total (\d+)$/m.exec(metrics)?.[1], `gateway on port ${g.port} fell back to its local limiter:\n${g.process.stderr.slice(-2000)}`).toBe('0');
      expect(metrics).toMatch(/^petstore_limiter_backend\{backend="redis"\} 1$/m);
    }
  }

  /** Request `i` of a burst goes to gateway i mod 3. */
  const spread = <T>(n: number, f: (g: Gateway, i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(gw[i % gw.length]!, i)));

  describe(title, () => {
    it('admit exactly 50 of 200 parallel requests spread over the three on a key with 50 left for the day', async () => {
      const { key } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'enterprise', perMinute: 1_000, perDay: 50 });
      const statuses = (await spread(200, (g) => g.as(key).get('/pets?limit=1'))).map((r) => r.status);
      await expectOnRedis();
      expect(statuses.filter((s) => s === 200)).toHaveLength(50);
      expect(statuses.filter((s) => s === 429)).toHaveLength(150);
      // Each gateway alone would have admitted up to 50 of its ~67: the 50 are one budget.
    });

    it('admit the 50 tokens of a per-minute bucket, plus only what refills meanwhile, to 200 parallel requests over the three', async () => {
      const { key } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'enterprise', perMinute: 50, perDay: 100_000 });
      const t0 = Date.now();
      const statuses = (await spread(200, (g) => g.as(key).get('/pets?limit=1'))).map((r) => r.status);
      // The bucket refills continuously at 50/60 tokens a second while the burst is under way.
      const refilled = Math.floor(((Date.now() - t0) / 1000) * (50 / 60));
      await expectOnRedis();
      const admitted = statuses.filter((s) => s === 200).length;
      expect(admitted).toBeGreaterThanOrEqual(50);
      expect(admitted).toBeLessThanOrEqual(50 + refilled);
      expect(statuses.filter((s) => s === 429)).toHaveLength(200 - admitted);
    });

    it('sell exactly the 5 units in stock to 20 concurrent orders spread over the three, leaving stock 0', async () => {
      const petId = await makePet(gw[0]!.admin, 'Contested', 5);
      const answers = await spread(20, (g) => g.admin.post('/store/orders', { petId, quantity: 1 }));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(5);
      expect(answers.filter((r) => r.status === 409)).toHaveLength(15);
      for (const g of gw) expect((await g.admin.get(`/store/inventory/${petId}`)).body).toEqual({ petId, quantity: 0, status: 'pending' });
      expect((await gw[2]!.admin.get(`/store/orders?petId=${petId}&limit=100`)).body).toHaveLength(5);
    });

    it('enforce a ban made through one on the others at once, and lift it through any', async () => {
      const { key, id } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'enterprise', perMinute: 1, perDay: 1_000 });
      expect((await gw[0]!.as(key).get('/pets?limit=1')).status).toBe(200);
      // Ten refusals spread over the three, the eleventh (through the first) starts the ban there.
      for (let i = 0; i < 10; i++) expect((await gw[i % 3]!.as(key).get('/pets?limit=1')).body.code).toBe('RATE_LIMITED');
      expect((await gw[0]!.as(key).get('/pets?limit=1')).body.code).toBe('RATE_LIMITED');
      for (const g of gw) {
        const res = await g.as(key).get('/pets?limit=1');
        expect(res.status).toBe(429);
        expect(res.body.code).toBe('KEY_BANNED');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(800);
      }
      expect((await gw[2]!.admin.delete(`/admin/bans/${id}`)).status).toBe(204);
      // Lifted everywhere: the bucket is still empty, so RATE_LIMITED again, never KEY_BANNED.
      for (const g of gw) expect((await g.as(key).get('/pets?limit=1')).body.code).toBe('RATE_LIMITED');
    });

    it('refuse a key revoked through one on every gateway within a second', async () => {
      const { key, id } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'pro' });
      for (const g of gw) expect((await g.as(key).get('/pets?limit=1')).status).toBe(200);
      expect((await gw[1]!.admin.delete(`/admin/keys/${id}`)).status).toBe(204);
      const t0 = Date.now();
      for (const g of gw) {
        expect(await within(1_000, async () => (await g.as(key).get('/pets?limit=1')).status === 401)).toBe(true);
      }
      expect(Date.now() - t0).toBeLessThan(1_000);
    });

    it('replay an Idempotency-Key used on one gateway when the request is repeated on another', async () => {
      const petId = await makePet(gw[0]!.admin, 'Replayed', 10);
      const headers = { 'idempotency-key': 'cluster-replay-1' };
      const first = await gw[0]!.admin.post('/store/orders', { petId, quantity: 2 }, { headers });
      expect(first.status).toBe(201);
      for (const g of gw.slice(1)) {
        const again = await g.admin.post('/store/orders', { petId, quantity: 2 }, { headers });
        expect(again.status).toBe(201);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(again.body).toEqual(first.body);
      }
      expect((await gw[2]!.admin.get(`/store/inventory/${petId}`)).body.quantity).toBe(8);
    });

    it('run a request once when its repeats reach all three at the same moment', async () => {
      const petId = await makePet(gw[0]!.admin, 'Raced', 10);
      const headers = { 'idempotency-key': 'cluster-race-1' };
      const answers = await spread(6, (g) => g.admin.post('/store/orders', { petId, quantity: 1 }, { headers }));
      expect(answers.map((r) => r.status)).toEqual(Array(6).fill(201));
      expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
      expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
      expect((await gw[1]!.admin.get(`/store/inventory/${petId}`)).body.quantity).toBe(9);
    });

    it('hand out unique ids, ascending in the order of creation, whichever gateway creates', async () => {
      const sequential: number[] = [];
      for (let i = 0; i < 12; i++) sequential.push((await gw[i % 3]!.admin.post('/categories', { name: `Sequential ${i}` })).body.id);
      expect([...sequential].sort((a, b) => a - b)).toEqual(sequential);
      expect(new Set(sequential).size).toBe(12);
      const concurrent = await spread(30, (g, i) => g.admin.post('/categories', { name: `Concurrent ${i}` }));
      expect(concurrent.map((r) => r.status)).toEqual(Array(30).fill(201));
      const ids = concurrent.map((r) => r.body.id as number);
      expect(new Set(ids).size).toBe(30);
      expect(Math.min(...ids)).toBeGreaterThan(Math.max(...sequential));
    });
    it('answer a read of a known key with one PostgreSQL statement: keys and bans are remembered', async () => {
      const { key } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'pro' });
      const petId = await makePet(gw[0]!.admin, 'Counted', 1);
      for (const g of gw) expect((await g.as(key).get(`/pets?ids=${petId}`)).status).toBe(200);
      await cluster.statements();
      for (let i = 0; i < 30; i++) expect((await gw[i % 3]!.as(key).get(`/pets?ids=${petId}`)).status).toBe(200);
      expect(await cluster.statements()).toBe(30);
    });

    it('refuse a key revoked through one within a second even when the others lost their listening connection at that moment', async () => {
      const { key, id } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'pro' });
      for (const g of gw) expect((await g.as(key).get('/pets?limit=1')).status).toBe(200);
      const before = gw.map((g) => logged(g, /^listening for changed keys and bans again/));
      await cluster.pg.sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'petstore-listen'`);
      expect((await gw[1]!.admin.delete(`/admin/keys/${id}`)).status).toBe(204);
      const t0 = Date.now();
      for (const g of gw) {
        expect(await within(1_000, async () => (await g.as(key).get('/pets?limit=1')).status === 401)).toBe(true);
      }
      expect(Date.now() - t0).toBeLessThan(1_000);
      // Each listens again by itself, and says so once.
      for (const [i, g] of gw.entries()) expect(await within(10_000, async () => logged(g, /^listening for changed keys and bans again/) === before[i]! + 1)).toBe(true);
    });

    /** The sequences of the feed after `after`, every page, as `g` answers them. */
    async function feedAfter(g: Gateway, after: number): Promise<number[]> {
      const feed: number[] = [];
      for (let cursor = after; ; ) {
        const res = await g.admin.get(`/events?after=${cursor}&limit=100`);
        expect(res.status).toBe(200);
        const page = res.body as { sequence: number }[];
        if (page.length === 0) return feed;
        feed.push(...page.map((e) => e.sequence));
        cursor = feed.at(-1)!;
      }
    }
    const latest = async (g: Gateway) => (await feedAfter(g, 0)).at(-1) ?? 0;

    it('show an event committed through one gateway to a follower of the feed on each other within a second', async () => {
      for (const [i, writer] of gw.entries()) {
        const after = await latest(writer);
        const made = await writer.admin.post('/categories', { name: `Followed ${i}` });
        expect(made.status).toBe(201);
        const t0 = Date.now();
        for (const follower of gw.filter((g) => g !== writer)) {
          const seen = await within(1_000, async () => {
            const page = (await follower.admin.get(`/events?after=${after}&type=category.created`)).body as { data: { object: { id: number } } }[];
            return page.some((e) => e.data.object.id === made.body.id);
          });
          expect(seen).toBe(true);
        }
        expect(Date.now() - t0).toBeLessThan(1_000);
      }
    });

    it('never show a follower on any gateway an event below a sequence it has seen, with writers on all three', async () => {
      const start = await latest(gw[0]!);
      const petId = await makePet(gw[0]!.admin, 'Followed', 1_000);
      let writing = true;
      // Followers resume after the last sequence they saw, as a client does: one that became visible below it would be missed.
      const followers = gw.map(async (g) => {
        const seen: number[] = [];
        let cursor = start;
        for (let round = 0; round < 2_000; round++) {
          const last = !writing;
          const res = await g.admin.get(`/events?after=${cursor}&limit=100`);
          expect(res.status).toBe(200);
          const page = res.body as { sequence: number }[];
          for (const e of page) seen.push((cursor = e.sequence));
          if (last && page.length === 0) break;
        }
        return seen;
      });
      await spread(60, (g, i) => (i % 2 ? g.admin.post('/store/orders', { petId, quantity: 1 }) : g.admin.post('/categories', { name: `Raced feed ${i}` })));
      writing = false;
      const seen = await Promise.all(followers);
      const feed = await feedAfter(gw[1]!, start);
      // 30 categories (one event each) and 30 orders (order.placed and inventory.changed each), consecutive.
      expect(feed).toEqual(Array.from({ length: feed.length }, (_, i) => start + 1 + i));
      expect(feed.length).toBeGreaterThanOrEqual(90 + 3);
      for (const s of seen) expect(s).toEqual(feed);
    });

    it('stream an event committed through any gateway to a stream on each within a second, also when their notifications are lost', async () => {
      const streams: FrameReader[] = [];
      try {
        for (const g of gw) streams.push(await mustOpen(`${g.url}/events/stream?type=category.created`, { 'x-api-key': ADMIN }));
        for (const r of streams) expect((await r.next()).raw).toBe('retry: 3000');
        for (const lost of [false, true]) {
          // Lost: every gateway's listening connection is cut, so no NOTIFY reaches them until they listen again;
          // the event log's poll still finds each event.
          if (lost) await cluster.pg.sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'petstore-listen'`);
          for (const [i, writer] of gw.entries()) {
            const made = await writer.admin.post('/categories', { name: `Streamed ${lost ? 'unheard' : 'heard'} ${i}` });
            expect(made.status).toBe(201);
            const t0 = Date.now();
            for (const r of streams) {
              const f = await r.nextEvent(Math.max(1, 1_000 - (Date.now() - t0)));
              expect(JSON.parse(f.data!).data.object).toEqual(made.body);
            }
            expect(Date.now() - t0).toBeLessThan(1_000);
          }
        }
      } finally {
        for (const r of streams) r.close();
      }
    });

    it('make each webhook attempt through exactly one of the three gateways', async () => {
      // A loopback receiver that fails the first attempt at each event and takes the second.
      const received = new Map<string, number>();
      const receiver = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          const id = String(req.headers['webhook-id']);
          const n = (received.get(id) ?? 0) + 1;
          received.set(id, n);
          res.writeHead(n === 1 ? 500 : 204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
        const hook = await gw[0]!.admin.post('/webhooks', { url, types: ['category.created'] });
        expect(hook.status, hook.text).toBe(201);
        const made = await spread(30, (g, i) => g.admin.post('/categories', { name: `Hooked ${i}` }));
        expect(made.map((r) => r.status)).toEqual(Array(30).fill(201));
        type Delivery = { eventId: string; status: string; attemptCount: number };
        const deliveries = async () => ((await gw[2]!.admin.get(`/webhooks/${hook.body.id}/deliveries?limit=100`)).body as Delivery[]);
        expect(await within(30_000, async () => (await deliveries()).filter((d) => d.status === 'succeeded').length === 30)).toBe(true);
        // Nothing more arrives later: no attempt was made by two gateways.
        await new Promise((r) => setTimeout(r, 1_500));
        const ds = await deliveries();
        expect(ds).toHaveLength(30);
        for (const d of ds) {
          expect(d).toMatchObject({ status: 'succeeded', attemptCount: 2 });
          expect(received.get(d.eventId), d.eventId).toBe(2);
        }
        expect(received.size).toBe(30);
      } finally {
        receiver.closeAllConnections();
        await new Promise((resolve) => receiver.close(resolve));
      }
    });
  });
}

/**
 * Three gateways when an engine goes away (CONTRACT section 13) and when one of them dies:
 * - PostgreSQL stopped: every request that needs it answers 503 SERVICE_UNAVAILABLE with
 *   Retry-After: 1 and /readyz 503 on every gateway, each logging the outage once; started again,
 *   they serve again by themselves, each logging the end once.
 * - Redis stopped: each gateway answers from its own limiter (still limiting), says so in
 *   /metrics, and goes back to Redis once it is started again.
 * - kill -9 of one gateway under load loses nothing it acknowledged.
 * Run directly (faults.test.ts) and through PgBouncer in transaction pooling mode (pgbouncer-faults.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, makeKey, startCluster, within, type Cluster, type ClusterOptions, type Gateway } from './cluster.js';

export function faultsClusterSuite(title: string, opts: ClusterOptions = {}): void {
  let cluster: Cluster;
  let gw: Gateway[];

  beforeAll(async () => {
    cluster = await startCluster(3, {}, opts);
    gw = cluster.gateways;
  });
  afterAll(() => cluster?.stop());

  const OUTAGE = /^PostgreSQL outage: /;
  const OUTAGE_OVER = /^PostgreSQL outage over/;

  describe(title, () => {
    it('answer 503 with Retry-After: 1 and /readyz 503 while PostgreSQL is stopped, and resume by themselves when it is back', async () => {
      const { key } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'pro' });
      for (const g of gw) expect((await g.as(key).get('/pets?limit=1')).status).toBe(200);

      await cluster.pg.stop();
      try {
        for (const g of gw) {
          for (let i = 0; i < 5; i++) {
            const res = await g.as(key).get('/pets?limit=1');
            expect(res.status).toBe(503);
            expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
            expect(res.headers.get('retry-after')).toBe('1');
          }
          expect((await g.admin.post('/categories', { name: 'During the outage' })).status).toBe(503);
          expect((await g.admin.get('/readyz')).status).toBe(503);
          expect((await g.admin.get('/healthz')).status).toBe(200);
        }
      } finally {
        await cluster.pg.start();
      }

      for (const g of gw) {
        expect(await within(10_000, async () => (await g.admin.get('/readyz')).status === 200)).toBe(true);
        expect((await g.as(key).get('/pets?limit=1')).status).toBe(200);
        expect((await g.admin.post('/categories', { name: `After the outage ${g.port}` })).status).toBe(201);
        // Logged once when it started and once when it ended, not once per request.
        expect(logged(g, OUTAGE)).toBe(1);
        expect(logged(g, OUTAGE_OVER)).toBe(1);
      }
    });

    it('keep limiting on their own limiters while Redis is stopped, and go back to Redis when it is back', async () => {
      const { key } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'enterprise', perMinute: 3, perDay: 1_000 });
      await cluster.redis.stop();
      try {
        await expectLocalLimits(key);
      } finally {
        await cluster.redis.start();
      }
      for (const g of gw) {
        expect(await within(10_000, async () => /^petstore_limiter_backend\{backend="redis"\} 1$/m.test((await g.admin.get('/metrics')).text))).toBe(true);
      }
      // One budget again (Redis came back empty): 3 for the three together.
      const { key: fresh } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'enterprise', perMinute: 3, perDay: 1_000 });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await gw[i % 3]!.as(fresh).get('/pets?limit=1')).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    });

    async function expectLocalLimits(key: string) {
      for (const g of gw) {
        // Its own budget, full at first: 3 admitted, the 4th refused. Never unlimited.
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) statuses.push((await g.as(key).get('/pets?limit=1')).status);
        expect(statuses).toEqual([200, 200, 200, 429]);
        // /metrics is rendered at most once a second: wait for a rendering made after the switch.
        let metrics = '';
        const local = (m: string) => /^petstore_limiter_backend\{backend="local"\} 1$/m.test(m) && Number(/^petstore_limiter_fallbacks_total (\d+)$/m.exec(m)?.[1]) >= 1;
        expect(await within(5_000, async () => local((metrics = (await g.admin.get('/metrics')).text)))).toBe(true);
        expect(metrics).toMatch(/^petstore_limiter_backend\{backend="local"\} 1$/m);
        expect(Number(/^petstore_limiter_fallbacks_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
        expect((await g.admin.get('/readyz')).status).toBe(200);
      }
    }

    it('lose nothing a gateway acknowledged when it is killed with SIGKILL under load', async () => {
      const victim = gw[2]!;
      const acknowledged: { id: number; name: string }[] = [];
      const failures: string[] = [];
      let stop = false;
      const deadline = Date.now() + 10_000;
      // Four writers per gateway, each at most 200 requests and 10 s.
      const writers = gw.flatMap((g, gi) =>
        Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; i < 200 && !stop && Date.now() < deadline; i++) {
            const name = `Load ${gi}.${w}.${i}`;
            try {
              const res = await g.admin.request('POST', '/categories', { body: { name }, unchecked: g === victim });
              if (res.status === 201) acknowledged.push({ id: res.body.id, name });
              else failures.push(`${res.status} ${res.text}`);
            } catch (err) {
              if (g !== victim) failures.push(String(err));
              else return; // the victim's connections die with it
            }
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 1_000));
      const beforeKill = acknowledged.length;
      victim.process.kill('SIGKILL');
      await victim.process.exited;
      await new Promise((r) => setTimeout(r, 1_000));
      stop = true;
      await Promise.all(writers);

      expect(beforeKill).toBeGreaterThan(0);
      expect(failures).toEqual([]);
      const survivor = gw[0]!;
      for (const { id, name } of acknowledged) {
        const res = await survivor.admin.get(`/categories/${id}`);
        expect(res.status, `acknowledged category ${id} (${name})`).toBe(200);
        expect(res.body.name).toBe(name);
      }
      expect(new Set(acknowledged.map((a) => a.id)).size).toBe(acknowledged.length);
      // Every acknowledged write's event is in the feed, once; sequences have no gap; and no event
      // is there without its change (the victim's unanswered writes committed whole or not at all).
      const events: { sequence: number; data: { object: { id: number; name: string } } }[] = [];
      for (let after = 0; ; ) {
        const page = await survivor.admin.get(`/events?type=category.created&after=${after}&limit=100`);
        expect(page.status).toBe(200);
        if (page.body.length === 0) break;
        events.push(...page.body);
        after = events.at(-1)!.sequence;
      }
      const created = new Map(events.map((e) => [e.data.object.id, e.data.object.name]));
      expect(created.size).toBe(events.length);
      for (const { id, name } of acknowledged) expect(created.get(id), `the event of category ${id}`).toBe(name);
      for (const [id] of created) expect((await survivor.admin.get(`/categories/${id}`)).status, `category ${id} of an event`).toBe(200);
      const all = (await survivor.admin.get(`/events?after=${events[0]!.sequence - 1}&limit=100`)).body as { sequence: number }[];
      expect(all.map((e) => e.sequence)).toEqual(all.map((_, i) => events[0]!.sequence + i));
      // A new gateway takes the dead one's place on the same engines.
      const replacement = await cluster.add();
      expect((await replacement.admin.get(`/categories/${acknowledged.at(-1)!.id}`)).status).toBe(200);
    });
  });
}

/**
 * Event streams across three gateways on one PostgreSQL and one Redis (CONTRACT sections 13 and
 * 14): a stream on any gateway gets an event committed through another within a second; a
 * revocation or a ban made through one gateway ends the key's streams on every gateway within a
 * second; a stream token made on one gateway opens a stream on another, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKey, startCluster, type Cluster, type Gateway } from './cluster.js';
import { expectError } from '../support/assertions.js';
import { mustOpen, mustRefuse, type FrameReader } from '../support/sse.js';

describe('event streams on three gateways', () => {
  let cluster: Cluster;
  let gw: Gateway[];
  const open: FrameReader[] = [];

  beforeAll(async () => {
    cluster = await startCluster(3, { PETSTORE_REDIS_TIMEOUT_MS: '2000' });
    gw = cluster.gateways;
  });
  afterAll(async () => {
    for (const r of open) r.close();
    await cluster?.stop();
  });

  async function streamOn(g: Gateway, key: string): Promise<FrameReader> {
    const r = await mustOpen(`${g.url}/events/stream`, { 'x-api-key': key });
    open.push(r);
    expect((await r.next()).raw).toBe('retry: 3000');
    return r;
  }

  it('delivers an event committed through one gateway to streams on the others within a second', async () => {
    const { key } = await makeKey(gw[0]!.admin, { role: 'staff', plan: 'pro' });
    const streams = [await streamOn(gw[1]!, key), await streamOn(gw[2]!, key)];
    const created = await gw[0]!.admin.post('/categories', { name: 'Across gateways' });
    expect(created.status).toBe(201);
    const t0 = performance.now(); // committed by now
    for (const r of streams) {
      const f = await r.nextEvent(3_000);
      expect(f.event).toBe('category.created');
      expect(JSON.parse(f.data!).data.object.id).toBe(created.body.id);
    }
    expect(performance.now() - t0).toBeLessThan(1_000);
  });

  it('ends a key\'s streams on every gateway within a second of its revocation through another', async () => {
    const { key, id } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'pro' });
    const streams = [await streamOn(gw[0]!, key), await streamOn(gw[2]!, key)];
    expect((await gw[1]!.admin.delete(`/admin/keys/${id}`)).status).toBe(204);
    const revoked = performance.now();
    for (const r of streams) {
      await r.untilEnd(3_000);
      expect(r.endedAt! - revoked).toBeLessThan(1_000);
    }
  });

  it('ends a key\'s streams on every gateway within a second of a ban started through another', async () => {
    const { key } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'enterprise', perMinute: 2, perDay: 1_000 });
    const streams = [await streamOn(gw[0]!, key), await streamOn(gw[2]!, key)];
    // Both requests of the minute went to the streams: eleven refusals on gateway 1 start a ban.
    for (let i = 0; i < 11; i++) expect((await gw[1]!.as(key).get('/pets?limit=1')).status).toBe(429);
    const banned = performance.now();
    for (const r of streams) {
      await r.untilEnd(3_000);
      expect(r.endedAt! - banned).toBeLessThan(1_000);
    }
    expectError(await mustRefuse(`${gw[2]!.url}/events/stream`, { 'x-api-key': key }), 429, 'KEY_BANNED');
  });

  it('opens a stream on one gateway with a token made on another, once', async () => {
    const { key } = await makeKey(gw[0]!.admin, { role: 'customer', plan: 'pro' });
    const made = await gw[0]!.as(key).post('/events/stream-tokens');
    expect(made.status).toBe(200);
    const token = encodeURIComponent(made.body.token as string);
    const r = await mustOpen(`${gw[1]!.url}/events/stream?token=${token}`);
    open.push(r);
    expect((await r.next()).raw).toBe('retry: 3000');
    expectError(await mustRefuse(`${gw[2]!.url}/events/stream?token=${token}`), 401, 'UNAUTHENTICATED');
    expectError(await mustRefuse(`${gw[1]!.url}/events/stream?token=${token}`), 401, 'UNAUTHENTICATED');
  });
});

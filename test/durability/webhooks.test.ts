/**
 * Webhook deliveries survive restarts and crashes (CONTRACT section 14): on the journal-backed
 * store, a crash image taken (as kill -9 leaves the directory) while a delivery waits for its retry,
 * before the fan-out has run, or while an attempt is under way, restarts into the same deliveries:
 * the pending one is retried when due, events are fanned out exactly once (the cursor commits with
 * the deliveries it made), and an attempt cut off by the crash is made again (at least once).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/service/records.js';
import { createServices, type Services } from '../../src/service/services.js';
import type { WebhookNetwork, WebhookOutcome, WebhookRequest } from '../../src/service/webhook-network.js';
import { openPersistentStore, type PersistentStore } from '../../src/store/data-dir/persistent-store.js';
import { FakeClock } from '../support/fixtures.js';
import { cleanUp, crashImage, eventually, tempDir } from './support.js';

const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e4, perDay: 1e7 };

/** A receiver in the process: answers `answer(request)`, counting what it got. */
function network(answer: (r: WebhookRequest) => Promise<WebhookOutcome> | WebhookOutcome): WebhookNetwork & { got: WebhookRequest[] } {
  const got: WebhookRequest[] = [];
  return {
    got,
    refuse: async () => undefined,
    send: async (r) => {
      got.push(r);
      return answer(r);
    },
  };
}

const running: { p: PersistentStore; s: Services }[] = [];

async function open(dir: string, clock: FakeClock, net: WebhookNetwork, start = true): Promise<{ p: PersistentStore; s: Services }> {
  const p = await openPersistentStore(dir, { probeMs: 10, watchMs: 60_000 });
  const s = createServices({ store: p.store, clock, adminSecret: 'admin-secret-for-tests', bans: { banSeconds: 900 }, webhooks: { network: net, pollMs: 10 } });
  if (start) s.webhookEngine.start();
  running.push({ p, s });
  return { p, s };
}

/** As kill -9: the engine and the store stop where they are, nothing more is written. */
async function crash(o: { p: PersistentStore; s: Services }): Promise<void> {
  const stopping = o.s.webhookEngine.stop();
  o.p.halt();
  await stopping.catch(() => undefined);
}

afterEach(async () => {
  for (const o of running.splice(0)) await crash(o);
  cleanUp();
});

async function deliveriesOf(s: Services, webhookId: number) {
  return (await s.webhooks.listDeliveries(admin, webhookId, undefined, { after: 0, limit: 100 })).items;
}

describe('webhook deliveries across crashes', () => {
  it('retries a pending delivery after a crash, once it is due, without a second fan-out', async () => {
    const dir = tempDir();
    const clock = new FakeClock();
    const first = await open(dir, clock, network(() => ({ status: 500 })));
    const hook = await first.s.webhooks.create(admin, { url: 'https://receiver.example/hook', types: ['category.*'] });
    await first.s.categories.create(admin, { name: 'Before the crash' });
    expect(await eventually(async () => (await deliveriesOf(first.s, hook.id))[0]?.attemptCount === 1)).toBe(true);
    const [before] = await deliveriesOf(first.s, hook.id);
    expect(before).toMatchObject({ status: 'pending', attempts: [{ status: 500 }] });

    const image = crashImage(dir);
    await crash(first);
    const net = network(() => ({ status: 204 }));
    const second = await open(image, clock, net);
    expect(await deliveriesOf(second.s, hook.id)).toEqual([before]);
    clock.t = Date.parse(before!.nextAttemptAt!);
    expect(await eventually(async () => (await deliveriesOf(second.s, hook.id))[0]?.status === 'succeeded')).toBe(true);
    const after = await deliveriesOf(second.s, hook.id);
    expect(after).toHaveLength(1);
    expect(after[0]!.attempts.map((a) => a.status)).toEqual([500, 204]);
    expect(net.got.map((r) => r.headers['webhook-id'])).toEqual([before!.eventId]);
  });

  it('fans out events written before a crash exactly once after it', async () => {
    const dir = tempDir();
    const clock = new FakeClock();
    const first = await open(dir, clock, network(() => ({ status: 204 })), false);
    const hook = await first.s.webhooks.create(admin, { url: 'https://receiver.example/hook', types: ['category.created'] });
    for (const name of ['One', 'Two', 'Three']) await first.s.categories.create(admin, { name });
    const image = crashImage(dir);
    await crash(first);

    const net = network(() => ({ status: 204 }));
    const second = await open(image, clock, net);
    expect(await eventually(async () => (await deliveriesOf(second.s, hook.id)).filter((d) => d.status === 'succeeded').length === 3)).toBe(true);
    // Another crash and restart: the cursor came back with the deliveries, so nothing is made twice.
    const again = crashImage(image);
    await crash(second);
    const third = await open(again, clock, network(() => ({ status: 204 })));
    await third.s.categories.create(admin, { name: 'Four' });
    expect(await eventually(async () => (await deliveriesOf(third.s, hook.id)).length === 4 && (await deliveriesOf(third.s, hook.id)).every((d) => d.status === 'succeeded'))).toBe(true);
    const ids = (await deliveriesOf(third.s, hook.id)).map((d) => d.eventId);
    expect(new Set(ids).size).toBe(4);
    expect(net.got).toHaveLength(3);
  });

  it('makes an attempt again that a crash cut off (at least once)', async () => {
    const dir = tempDir();
    const clock = new FakeClock();
    let answered = false;
    const hanging = network(() => new Promise<WebhookOutcome>(() => undefined));
    const first = await open(dir, clock, hanging);
    const hook = await first.s.webhooks.create(admin, { url: 'https://receiver.example/hook', types: ['category.created'] });
    await first.s.categories.create(admin, { name: 'Cut off' });
    expect(await eventually(() => hanging.got.length === 1)).toBe(true);
    const image = crashImage(dir);
    // The crash: the store stops; the attempt under way never ends (stop() would wait for it).
    void first.s.webhookEngine.stop();
    first.p.halt();
    running.splice(running.indexOf(first), 1);

    const net = network(() => {
      answered = true;
      return { status: 200 };
    });
    const second = await open(image, clock, net);
    expect(await eventually(async () => (await deliveriesOf(second.s, hook.id))[0]?.status === 'succeeded')).toBe(true);
    expect(answered).toBe(true);
    expect(net.got[0]!.headers['webhook-id']).toBe(hanging.got[0]!.headers['webhook-id']);
    expect(net.got[0]!.body).toBe(hanging.got[0]!.body);
  });
});

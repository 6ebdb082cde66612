/**
 * The delivery engine's schedule (CONTRACT section 14) with the jitter fixed at its top: attempt n
 * (n >= 2) waits exactly min(6 h, B x 2^(n-2)) after the one before, at most 12 attempts; with the
 * jitter at 0 a retry is due at once, and a Retry-After still holds it back.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import { FakeClock } from '../../test/support/fixtures.js';
import { createServices } from './services.js';
import type { Principal } from './records.js';
import type { WebhookOutcome } from './webhook-network.js';
import { toDelivery } from './webhooks.js';

const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e4, perDay: 1e7 };

/** The services on a fresh store and clock, every delivery answered with `answer`. */
function servicesAnswering(answer: WebhookOutcome, webhooks: { retryBaseSeconds?: number; random?: () => number } = {}) {
  const clock = new FakeClock();
  const store = new MemoryStore();
  const s = createServices({
    store,
    clock,
    adminSecret: 'admin-secret-for-tests',
    bans: { banSeconds: 900 },
    webhooks: { network: { refuse: async () => undefined, send: async () => answer }, ...webhooks },
  });
  return { clock, store, s };
}

async function failingEndpoint(random: number, answer: WebhookOutcome) {
  const { clock, store, s } = servicesAnswering(answer, { retryBaseSeconds: 10, random: () => random });
  const hook = await s.webhooks.create(admin, { url: 'https://receiver.example/x', types: ['category.created'] });
  await s.categories.create(admin, { name: 'C' });
  await s.webhookEngine.fanOut();
  const delivery = async () => (await store.listWebhookDeliveries({ endpointId: hook.id, after: 0, limit: 1 }))[0]!;
  /** One attempt of the delivery, as the engine makes it when it falls due; the delivery as the API shows it then. */
  const attempt = async () => {
    await s.webhookEngine.attempt(await delivery());
    return toDelivery(await delivery());
  };
  return { clock, attempt };
}

describe('webhook retry schedule', () => {
  it('waits min(6 h, B x 2^(n-2)) before attempt n at the top of the jitter, and stops after 12', async () => {
    const { clock, attempt } = await failingEndpoint(1 - Number.EPSILON, { status: 500 });
    const waits: number[] = [];
    let d = await attempt();
    while (d.status === 'pending') {
      const wait = Date.parse(d.nextAttemptAt!) - clock.now();
      waits.push(Math.round(wait / 1000));
      clock.t = Date.parse(d.nextAttemptAt!);
      d = await attempt();
    }
    expect(waits).toEqual([10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240].map((w) => Math.min(w, 6 * 3600)));
    expect(d).toMatchObject({ status: 'failed', attemptCount: 12 });
  });

  it('is due at once at the bottom of the jitter, but never before a Retry-After', async () => {
    const now = await failingEndpoint(0, { status: 503 });
    const d = await now.attempt();
    expect(Date.parse(d.nextAttemptAt!)).toBe(now.clock.now());
    const later = await failingEndpoint(0, { status: 503, retryAfter: '90' });
    const d2 = await later.attempt();
    expect(Date.parse(d2.nextAttemptAt!) - later.clock.now()).toBe(90_000);
  });

  it('keeps the newest deliveries of the log (and every pending one) when it prunes', async () => {
    const { store, s } = servicesAnswering({ status: 204 });
    const hook = await s.webhooks.create(admin, { url: 'https://receiver.example/x', types: ['category.created'] });
    for (let i = 0; i < 6; i++) await s.categories.create(admin, { name: `C${i}` });
    await s.webhookEngine.fanOut();
    const all = await store.listWebhookDeliveries({ endpointId: hook.id, after: 0, limit: 10 });
    for (const d of all.slice(0, 5)) await s.webhookEngine.attempt(d);
    await s.webhookEngine.prune(3);
    const left = await store.listWebhookDeliveries({ endpointId: hook.id, after: 0, limit: 10 });
    // The newest three stay (the last still pending), the older finished ones are gone.
    expect(left.map((d) => [d.id, d.status])).toEqual([
      [all[3]!.id, 'succeeded'],
      [all[4]!.id, 'succeeded'],
      [all[5]!.id, 'pending'],
    ]);
  });
});

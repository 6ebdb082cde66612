/**
 * Webhook delivery (CONTRACT section 14), on every target: a loopback receiver on the servers, the
 * mocks' onWebhook on the mocks. Deliveries are signed with Standard Webhooks v1 (verified with the
 * `standardwebhooks` package, as receivers verify them), carry the event's JSON, follow the one
 * visibility rule with the owner key's role, and are logged without the receiver's body. A
 * receiver that fails on purpose is retried as the test's clock moves (full-jitter backoff with
 * base B: attempt n waits at most B x 2^(n-2)), never before a Retry-After; 410 disables the
 * endpoint at once and its owner gets `webhook_endpoint.disabled`; 72 hours of failures do too.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { startTarget, targetKind, type Target } from '../../support/target.js';
import { startReceiver, type ReceivedWebhook, type Receiver } from '../../support/webhook-receiver.js';
import { newCategory, newPet } from '../../support/fixtures.js';
import type { Api } from '../../support/http.js';

const BASE_SECONDS = 30;
const HOUR_MS = 3_600_000;

interface Delivery {
  id: number;
  webhookId: number;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attemptCount: number;
  attempts: { at: string; status?: number; error?: string; durationMs: number }[];
  nextAttemptAt?: string;
}

async function deliveries(api: Api, webhookId: number, query = ''): Promise<Delivery[]> {
  const res = await api.get<Delivery[]>(`/webhooks/${webhookId}/deliveries?limit=100${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Waits (real time, bounded) until `check` holds of the endpoint's deliveries. */
async function until(api: Api, webhookId: number, check: (ds: Delivery[]) => boolean, what: string): Promise<Delivery[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ds = await deliveries(api, webhookId);
    if (check(ds)) return ds;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(ds)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function register(api: Api, url: string, types: string[]): Promise<{ id: number; secret: string }> {
  const res = await api.post('/webhooks', { url, types });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

function verify(secret: string, r: ReceivedWebhook): unknown {
  return new StandardWebhook(secret).verify(r.body, { 'webhook-id': r.headers['webhook-id']!, 'webhook-timestamp': r.headers['webhook-timestamp']!, 'webhook-signature': r.headers['webhook-signature']! });
}

describe('webhook delivery', () => {
  let t: Target;
  let rx: Receiver;
  let staff: Api;

  beforeAll(async () => {
    rx = await startReceiver(targetKind(), { retryBaseSeconds: BASE_SECONDS });
    t = await startTarget(rx.targetOptions);
    staff = await t.client('staff');
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });
  beforeEach(() => {
    rx.answers.length = 0;
  });

  it('delivers each subscribed event once, signed as Standard Webhooks v1 says, with the event JSON', async () => {
    // standardwebhooks refuses timestamps more than 5 minutes from its own clock: the test clock is set to now.
    t.clock.t = Date.now();
    const hook = await register(staff, rx.url, ['category.*']);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/);
    const c = await newCategory(staff, { name: 'Hooked fish' });
    await newPet(staff, { categoryId: c.id }); // pet.created: not subscribed
    const [d] = await until(staff, hook.id, (ds) => ds.length === 1 && ds[0]!.status === 'succeeded', 'one succeeded delivery');
    expect(d).toMatchObject({ webhookId: hook.id, eventType: 'category.created', attemptCount: 1 });
    expect(d!.attempts[0]).toMatchObject({ status: 204 });
    const got = rx.received.filter((r) => r.headers['webhook-id'] === d!.eventId);
    expect(got).toHaveLength(1);
    const event = verify(hook.secret, got[0]!) as { id: string; type: string; sequence: number; data: { object: { id: number; name: string } } };
    expect(event).toMatchObject({ id: d!.eventId, type: 'category.created', data: { object: { id: c.id, name: 'Hooked fish' } } });
    expect(event.id).toBe(`evt_${event.sequence}`);
    expect(got[0]!.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(got[0]!.headers['webhook-timestamp'])).toBe(Math.floor(t.clock.now() / 1000));
    // The feed has the same event, byte for byte the same JSON.
    expect((await staff.get(`/events/${event.id}`)).body).toEqual(event);
    // A signature made with another secret does not verify.
    expect(() => new StandardWebhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(got[0]!.body, got[0]!.headers)).toThrow();
    expect((await staff.delete(`/webhooks/${hook.id}`)).status).toBe(204);
  });

  it('retries a failing receiver as the clock moves, within the backoff, and logs no response body', async () => {
    const hook = await register(staff, rx.url, ['category.created']);
    rx.answers.push({ status: 500 }, { status: 503 }, { status: 502 });
    const before = rx.received.length;
    await newCategory(staff, { name: 'Flaky' });
    let [d] = await until(staff, hook.id, (ds) => ds[0]?.attemptCount === 1, 'the first attempt');
    expect(d).toMatchObject({ status: 'pending', attempts: [{ status: 500 }] });
    // Attempt 2 is due within B seconds of the first; attempt 3 within 2B; attempt 4 within 4B.
    for (const [n, bound] of [[2, BASE_SECONDS], [3, 2 * BASE_SECONDS], [4, 4 * BASE_SECONDS]] as const) {
      const due = Date.parse(d!.nextAttemptAt!);
      const last = Date.parse(d!.attempts.at(-1)!.at);
      expect(due - last).toBeLessThanOrEqual(bound * 1000 + 1000);
      expect(due).toBeGreaterThanOrEqual(last);
      t.clock.t = Math.max(t.clock.t, due);
      [d] = await until(staff, hook.id, (ds) => ds[0]!.attemptCount === n, `attempt ${n}`);
    }
    expect(d).toMatchObject({ status: 'succeeded', attemptCount: 4 });
    expect(d!.attempts.map((a) => a.status)).toEqual([500, 503, 502, 204]);
    expect(d).not.toHaveProperty('nextAttemptAt');
    expect(rx.received.length - before).toBe(4);
    // Every attempt carries the same event id, each signed for its own timestamp.
    const ids = new Set(rx.received.slice(before).map((r) => r.headers['webhook-id']));
    expect(ids).toEqual(new Set([d!.eventId]));
    const log = await staff.get(`/webhooks/${hook.id}/deliveries`);
    expect(log.text).not.toContain('a receiver body');
    expect((await deliveries(staff, hook.id, '&status=succeeded')).map((x) => x.id)).toEqual([d!.id]);
    expect(await deliveries(staff, hook.id, '&status=pending')).toEqual([]);
    expect((await staff.delete(`/webhooks/${hook.id}`)).status).toBe(204);
  });

  it('waits at least a Retry-After', async () => {
    const hook = await register(staff, rx.url, ['category.created']);
    rx.answers.push({ status: 429, headers: { 'retry-after': '7200' } });
    await newCategory(staff, { name: 'Busy receiver' });
    const [d] = await until(staff, hook.id, (ds) => ds[0]?.attemptCount === 1, 'the first attempt');
    expect(Date.parse(d!.nextAttemptAt!) - Date.parse(d!.attempts[0]!.at)).toBeGreaterThanOrEqual(7200 * 1000);
    t.clock.t = Date.parse(d!.nextAttemptAt!);
    await until(staff, hook.id, (ds) => ds[0]!.status === 'succeeded', 'the retry');
    expect((await staff.delete(`/webhooks/${hook.id}`)).status).toBe(204);
  });

  it('disables an endpoint at once on 410, and tells its owner', async () => {
    const owner = await t.client('customer');
    const hook = await register(owner, rx.url, ['category.*', 'webhook_endpoint.disabled']);
    rx.answers.push({ status: 410 });
    await newCategory(staff, { name: 'Gone receiver' });
    const [d] = await until(owner, hook.id, (ds) => ds[0]?.status === 'failed', 'the failed delivery');
    expect(d!.attempts.map((a) => a.status)).toEqual([410]);
    const ep = (await owner.get(`/webhooks/${hook.id}`)).body;
    expect(ep).toMatchObject({ status: 'disabled', disabledReason: 'gone' });
    const disabled = (await owner.get('/events?type=webhook_endpoint.disabled&limit=100')).body as { data: { object: { id: number } } }[];
    expect(disabled.map((e) => e.data.object.id)).toContain(hook.id);
    // Another customer does not see it; staff does.
    const other = await t.client('customer');
    expect(((await other.get('/events?type=webhook_endpoint.disabled&limit=100')).body as unknown[]).length).toBe(0);
    // A disabled endpoint gets nothing more; enabled again, it gets the events from then on.
    await newCategory(staff, { name: 'While disabled' });
    expect((await owner.patch(`/webhooks/${hook.id}`, { status: 'enabled' })).body).toMatchObject({ status: 'enabled' });
    expect((await owner.get(`/webhooks/${hook.id}`)).body).not.toHaveProperty('disabledReason');
    await newCategory(staff, { name: 'After enabling' });
    const ds = await until(owner, hook.id, (x) => x.length === 2 && x[1]!.status === 'succeeded', 'the delivery after enabling');
    expect(ds).toHaveLength(2);
  });

  it('disables an endpoint whose attempts have all failed for 72 hours', async () => {
    const owner = await t.client('customer');
    const hook = await register(owner, rx.url, ['category.created']);
    for (let i = 0; i < 40; i++) rx.answers.push({ status: 500 });
    await newCategory(staff, { name: 'Doomed 1' });
    await until(owner, hook.id, (ds) => ds[0]?.attemptCount === 1, 'the first attempt');
    // Days pass; a later event's attempts still fail.
    t.clock.t += 73 * HOUR_MS;
    await newCategory(staff, { name: 'Doomed 2' });
    await until(owner, hook.id, (ds) => ds.length === 2 && ds.every((x) => x.status === 'failed'), 'both deliveries failed');
    expect((await owner.get(`/webhooks/${hook.id}`)).body).toMatchObject({ status: 'disabled', disabledReason: 'failing' });
    const events = (await owner.get('/events?type=webhook_endpoint.disabled&limit=100')).body as { data: { object: { id: number; status: string } } }[];
    expect(events.find((e) => e.data.object.id === hook.id)?.data.object.status).toBe('disabled');
    rx.answers.length = 0;
  });

  it('gives up after 12 attempts', async () => {
    const hook = await register(staff, rx.url, ['category.created']);
    for (let i = 0; i < 12; i++) rx.answers.push({ status: 500 });
    await newCategory(staff, { name: 'Twelve tries' });
    let d: Delivery | undefined;
    for (let n = 1; n <= 12; n++) {
      [d] = await until(staff, hook.id, (ds) => ds[0]?.attemptCount === n, `attempt ${n}`);
      if (n < 12) t.clock.t = Math.max(t.clock.t, Date.parse(d!.nextAttemptAt!));
    }
    expect(d).toMatchObject({ status: 'failed', attemptCount: 12 });
    // Waits grew with the attempt number and never passed 6 hours.
    for (const [i, a] of d!.attempts.entries()) {
      if (i === 0) continue;
      const wait = Date.parse(a.at) - Date.parse(d!.attempts[i - 1]!.at);
      expect(wait).toBeLessThanOrEqual(Math.min(6 * HOUR_MS, BASE_SECONDS * 1000 * 2 ** (i - 1)) + 1000);
    }
    expect((await staff.delete(`/webhooks/${hook.id}`)).status).toBe(204);
  });

  it('redelivers an event as a new delivery with the same event id, and pings', async () => {
    const hook = await register(staff, rx.url, ['category.created']);
    await newCategory(staff, { name: 'Again please' });
    const [first] = await until(staff, hook.id, (ds) => ds[0]?.status === 'succeeded', 'the first delivery');
    const again = await staff.post(`/webhooks/${hook.id}/deliveries/${first!.id}/redeliver`);
    expect(again.status, again.text).toBe(202);
    expect(again.body).toMatchObject({ webhookId: hook.id, eventId: first!.eventId, status: 'pending', attemptCount: 0 });
    expect(again.body.id).not.toBe(first!.id);
    await until(staff, hook.id, (ds) => ds.length === 2 && ds[1]!.status === 'succeeded', 'the redelivery');
    expect(rx.received.filter((r) => r.headers['webhook-id'] === first!.eventId)).toHaveLength(2);

    t.clock.t = Date.now();
    const ping = await staff.post(`/webhooks/${hook.id}/ping`);
    expect(ping.status, ping.text).toBe(202);
    expect(ping.body).toMatchObject({ eventType: 'webhook.ping', eventId: `evt_ping_${ping.body.id}` });
    await until(staff, hook.id, (ds) => ds.some((x) => x.id === ping.body.id && x.status === 'succeeded'), 'the ping');
    const got = rx.received.find((r) => r.headers['webhook-id'] === ping.body.eventId)!;
    expect(verify(hook.secret, got)).toMatchObject({ type: 'webhook.ping', data: { object: { id: hook.id, url: rx.url } } });
    // Not in the feed.
    expect((await staff.get(`/events/${ping.body.eventId}`)).status).toBe(404);
    expect((await staff.post(`/webhooks/${hook.id}/deliveries/999999/redeliver`)).status).toBe(404);
    expect((await staff.delete(`/webhooks/${hook.id}`)).status).toBe(204);
  });

  it("filters with the owner key's role: a customer's endpoint gets only what that customer may see; a revoked key's stop", async () => {
    const alice = await t.client('customer');
    const bob = await t.client('customer');
    const hook = await register(alice, rx.url, ['order.*']);
    const pet = await newPet(staff, { categoryId: (await newCategory(staff)).id });
    expect((await staff.put(`/store/inventory/${pet.id}`, { quantity: 5 })).status).toBe(200);
    const bobs = await bob.post('/store/orders', { petId: pet.id, quantity: 1 });
    const alices = await alice.post('/store/orders', { petId: pet.id, quantity: 1 });
    expect([bobs.status, alices.status]).toEqual([201, 201]);
    const ds = await until(alice, hook.id, (x) => x.length >= 1 && x.every((d) => d.status !== 'pending'), "alice's order event");
    expect(ds.map((d) => d.eventType)).toEqual(['order.placed']);
    const body = rx.received.find((r) => r.headers['webhook-id'] === ds[0]!.eventId)!;
    expect(JSON.parse(body.body).data.object.id).toBe(alices.body.id);

    // Revoked: its endpoints get nothing more.
    expect((await t.admin.delete(`/admin/keys/${alice.keyId}`)).status).toBe(204);
    const count = rx.received.length;
    expect((await staff.post('/store/orders', { petId: pet.id, quantity: 1 })).status).toBe(201);
    // A later delivery to a staff endpoint proves the fan-out ran past the order.
    const staffHook = await register(staff, rx.url, ['category.created']);
    await newCategory(staff, { name: 'After the revocation' });
    await until(staff, staffHook.id, (x) => x[0]?.status === 'succeeded', 'the staff delivery');
    expect(rx.received.slice(count).map((r) => JSON.parse(r.body).type)).toEqual(['category.created']);
    expect((await staff.delete(`/webhooks/${staffHook.id}`)).status).toBe(204);
  });
});

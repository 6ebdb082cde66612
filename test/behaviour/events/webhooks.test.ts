/**
 * The webhook endpoints' API (CONTRACT section 14): create (201, the secret shown this once), list
 * (paged), get, patch, delete; a customer and a staff key manage their own endpoints, an admin
 * every one, another key's is 404; at most 10 per key; bodies checked; and no SSRF: https only,
 * no credentials, no host that is or resolves to a loopback, private, link-local, unique-local,
 * CGNAT, multicast or unspecified address (422 WEBHOOK_URL_FORBIDDEN), but for the hosts on
 * PETSTORE_WEBHOOK_ALLOW_HOSTS, which may use http too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import { expectError, expectValidation } from '../../support/assertions.js';
import { allPages } from '../../support/paging.js';
import type { Api } from '../../support/http.js';

const URL_OK = 'https://receiver.example/hooks/petstore';

describe('webhook endpoints', () => {
  let t: Target;
  let staff: Api & { keyId: number };
  let alice: Api & { keyId: number };
  let bob: Api & { keyId: number };

  beforeAll(async () => {
    t = await startTarget({ webhooks: { allowHosts: ['127.0.0.1', 'hooks.internal'] } });
    staff = await t.client('staff');
    alice = await t.client('customer');
    bob = await t.client('customer');
  });
  afterAll(() => t.close());

  it('creates an endpoint with its secret shown once, and reads, updates and deletes it', async () => {
    const res = await alice.post('/webhooks', { url: URL_OK, types: ['order.*', 'inventory.changed'], description: 'Order desk' });
    expect(res.status, res.text).toBe(201);
    const { secret, ...hook } = res.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/);
    expect(atob(secret.slice(6)).length).toBeGreaterThanOrEqual(24);
    expect(hook).toMatchObject({ url: URL_OK, types: ['order.*', 'inventory.changed'], description: 'Order desk', status: 'enabled', ownerKeyId: alice.keyId });
    expect(res.headers.get('location')).toBe(`/webhooks/${hook.id}`);

    const got = await alice.get(`/webhooks/${hook.id}`);
    expect(got.body).toEqual(hook);
    expect(got.text).not.toContain(secret);
    expect((await alice.get('/webhooks')).text).not.toContain(secret);

    const patched = await alice.patch(`/webhooks/${hook.id}`, { types: ['pet.created'], description: null, status: 'disabled' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ types: ['pet.created'], status: 'disabled', disabledReason: 'manual' });
    expect(patched.body).not.toHaveProperty('description');
    expect(patched.body.updatedAt).toBeDefined();
    const moved = await alice.patch(`/webhooks/${hook.id}`, { url: 'https://receiver.example/other', status: 'enabled' });
    expect(moved.body).toMatchObject({ url: 'https://receiver.example/other', status: 'enabled' });
    expect(moved.body).not.toHaveProperty('disabledReason');

    expect((await alice.delete(`/webhooks/${hook.id}`)).status).toBe(204);
    expectError(await alice.get(`/webhooks/${hook.id}`), 404, 'NOT_FOUND');
    expectError(await alice.get(`/webhooks/${hook.id}/deliveries`), 404, 'NOT_FOUND');
  });

  it('lets customers and staff manage their own endpoints only, and an admin every one', async () => {
    const mine = (await alice.post('/webhooks', { url: URL_OK, types: ['pet.*'] })).body;
    const staffs = (await staff.post('/webhooks', { url: URL_OK, types: ['pet.*'] })).body;
    for (const [api, other] of [[bob, mine], [staff, mine], [alice, staffs]] as const) {
      expectError(await api.get(`/webhooks/${other.id}`), 404, 'NOT_FOUND');
      expectError(await api.patch(`/webhooks/${other.id}`, { status: 'disabled' }), 404, 'NOT_FOUND');
      expectError(await api.delete(`/webhooks/${other.id}`), 404, 'NOT_FOUND');
      expectError(await api.post(`/webhooks/${other.id}/ping`), 404, 'NOT_FOUND');
      expectError(await api.get(`/webhooks/${other.id}/deliveries`), 404, 'NOT_FOUND');
    }
    const listed = async (api: Api) => ((await allPages(api, '/webhooks?limit=1')).items as { id: number }[]).map((w) => w.id);
    expect(await listed(alice)).toEqual([mine.id]);
    expect(await listed(bob)).toEqual([]);
    expect(await listed(staff)).toEqual([staffs.id]);
    expect(await listed(t.admin)).toEqual(expect.arrayContaining([mine.id, staffs.id]));
    expect((await t.admin.get(`/webhooks/${mine.id}`)).body.ownerKeyId).toBe(alice.keyId);
    expect((await t.admin.patch(`/webhooks/${mine.id}`, { description: 'checked by admin' })).status).toBe(200);
    expect((await t.admin.delete(`/webhooks/${staffs.id}`)).status).toBe(204);
    expect((await alice.delete(`/webhooks/${mine.id}`)).status).toBe(204);
    expectError(await t.anon.get('/webhooks'), 401, 'UNAUTHENTICATED');
  });

  it('allows at most 10 endpoints per key', async () => {
    const carol = await t.client('customer');
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await carol.post('/webhooks', { url: `${URL_OK}/${i}`, types: ['pet.created'] });
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id);
    }
    expectValidation(await carol.post('/webhooks', { url: URL_OK, types: ['pet.created'] }), '/url');
    // Another key is not limited by carol's endpoints.
    const other = await bob.post('/webhooks', { url: URL_OK, types: ['pet.created'] });
    expect(other.status).toBe(201);
    expect((await carol.delete(`/webhooks/${ids[0]}`)).status).toBe(204);
    expect((await carol.post('/webhooks', { url: URL_OK, types: ['pet.created'] })).status).toBe(201);
    expect((await bob.delete(`/webhooks/${other.body.id}`)).status).toBe(204);
  });

  it('checks the body: types known and non-empty, url absolute, no unknown fields', async () => {
    expectValidation(await alice.post('/webhooks', { url: URL_OK, types: ['order.shipped'] }), '/types');
    expectValidation(await alice.post('/webhooks', { url: URL_OK, types: [] }), '/types');
    expectValidation(await alice.post('/webhooks', { url: URL_OK }), '/types');
    expectValidation(await alice.post('/webhooks', { types: ['pet.*'] }), '/url');
    expectValidation(await alice.post('/webhooks', { url: 'not a url', types: ['pet.*'] }), '/url');
    expectValidation(await alice.post('/webhooks', { url: URL_OK, types: ['pet.*'], secret: 'whsec_mine' }), '/secret');
    const hook = (await alice.post('/webhooks', { url: URL_OK, types: ['pet.*'] })).body;
    expectValidation(await alice.patch(`/webhooks/${hook.id}`, {}), '');
    expectValidation(await alice.patch(`/webhooks/${hook.id}`, { status: 'paused' }), '/status');
    expectValidation(await alice.patch(`/webhooks/${hook.id}`, { types: ['nope.*'] }), '/types');
    expectError(await alice.get('/webhooks/abc'), 400, 'BAD_REQUEST');
    expectError(await alice.get(`/webhooks/${hook.id}/deliveries?status=lost`), 400, 'VALIDATION_FAILED');
    expect((await alice.delete(`/webhooks/${hook.id}`)).status).toBe(204);
  });

  describe('no SSRF', () => {
    const refused = [
      ['http on a public host', 'http://receiver.example/hook'],
      ['credentials', 'https://user:pass@receiver.example/hook'],
      ['an IPv4 loopback', 'https://127.0.0.2/hook'],
      ['an IPv6 loopback', 'https://[::1]/hook'],
      ['a private address', 'https://10.1.2.3/hook'],
      ['another private address', 'https://192.168.0.10:8443/hook'],
      ['a link-local address (cloud metadata)', 'https://169.254.169.254/latest/meta-data'],
      ['a CGNAT address', 'https://100.64.0.1/hook'],
      ['a unique-local address', 'https://[fd12:3456::1]/hook'],
      ['a multicast address', 'https://224.0.0.1/hook'],
      ['the unspecified address', 'https://0.0.0.0/hook'],
      ['an IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
      ['a loopback in decimal (127.0.0.2)', 'https://2130706434/hook'],
      ['a host name that resolves to loopback', 'https://localhost/hook'],
      ['a subdomain of localhost', 'https://api.localhost:8443/hook'],
      ['ftp', 'ftp://receiver.example/hook'],
    ] as const;
    it.each(refused)('refuses %s at registration', async (_, url) => {
      const res = await alice.post('/webhooks', { url, types: ['pet.*'] });
      expectError(res, 422, 'WEBHOOK_URL_FORBIDDEN');
      expect(res.body.details[0].path).toBe('/url');
    });

    it('refuses such a URL in a PATCH too', async () => {
      const hook = (await alice.post('/webhooks', { url: URL_OK, types: ['pet.*'] })).body;
      expectError(await alice.patch(`/webhooks/${hook.id}`, { url: 'https://10.0.0.1/x' }), 422, 'WEBHOOK_URL_FORBIDDEN');
      expect((await alice.get(`/webhooks/${hook.id}`)).body.url).toBe(URL_OK);
      expect((await alice.delete(`/webhooks/${hook.id}`)).status).toBe(204);
    });

    it('lets the allowed hosts through, over http too', async () => {
      for (const url of ['http://127.0.0.1:8080/hook', 'https://127.0.0.1/hook', 'http://hooks.internal/hook', 'http://HOOKS.internal:9000/x']) {
        const res = await alice.post('/webhooks', { url, types: ['pet.*'] });
        expect(res.status, `${url}: ${res.text}`).toBe(201);
        expect((await alice.delete(`/webhooks/${res.body.id}`)).status).toBe(204);
      }
      // Allowing 127.0.0.1 allows that host only, not loopback as such.
      expectError(await alice.post('/webhooks', { url: 'http://127.0.0.2/hook', types: ['pet.*'] }), 422, 'WEBHOOK_URL_FORBIDDEN');
      expectError(await alice.post('/webhooks', { url: 'https://user:pw@127.0.0.1/hook', types: ['pet.*'] }), 422, 'WEBHOOK_URL_FORBIDDEN');
    });
  });
});

/**
 * The full-disk story, over HTTP (CONTRACT section 10, "Visibility and faults"): the
 * real Koa app over the persistent store, whose file-system layer the test fills up and frees
 * again (no root, no mount). Every response goes through the contract check.
 *
 * While the disk is full: writes answer 503 SERVICE_UNAVAILABLE with Retry-After: 1, on REST and
 * GraphQL; reads answer from the durable state (a pet whose POST was answered 503 is nowhere);
 * /readyz is 503. Once space is back the service takes writes again by itself within a second,
 * and a restart finds exactly the acknowledged writes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/hosts/koa/app.js';
import { loadContract } from '../../src/contract/openapi.js';
import { createLogger } from '../../src/logger.js';
import { RateLimiter } from '../../src/limits/rate-limiter.js';
import { createServices } from '../../src/service/services.js';
import { Api } from '../support/http.js';
import { FaultyFs } from './faulty-fs.js';
import { cleanUp, crashImage, eventually, openStore, tempDir } from './support.js';

const ADMIN = 'psk_enterprise_DiskFullAdminKey0123456789abcdefXYZ';
const contract = loadContract();
const servers: Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  cleanUp();
});

async function serve(dir: string, ffs?: FaultyFs) {
  const { p } = await openStore(dir, ffs, { probeMs: 200, watchMs: 60_000 });
  const clock = { now: () => Date.now() };
  const services = createServices({ store: p.store, clock, adminSecret: ADMIN, bans: { banSeconds: 900 } });
  const app = await createApp({
    contract,
    services,
    clock,
    logger: createLogger('silent'),
    ready: p.ready,
    sunset: new Date('2027-06-30T23:59:59Z'),
    limiter: new RateLimiter({ clock }),
    banThresholds: { threshold: 10, windowSeconds: 60 },
  });
  const server = createServer(app.callback());
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { api: new Api(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ADMIN), p };
}

describe('a disk that fills up and is freed again', () => {
  it('answers writes 503 with Retry-After: 1 while full, serves reads from the durable state, and resumes by itself', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { api, p } = await serve(dir, ffs);
    const dogs = await api.post('/categories', { name: 'Dogs' });
    expect(dogs.status).toBe(201);
    const rex = await api.post('/pets', { name: 'Rex', categoryId: dogs.body.id });
    expect(rex.status).toBe(201);

    ffs.fail({ op: 'write', path: /./, code: 'ENOSPC' });
    const refused = await api.post('/pets', { name: 'Phantom', categoryId: dogs.body.id });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const res of [
      await api.put(`/store/inventory/${rex.body.id}`, { quantity: 5 }),
      await api.post('/store/orders', { petId: rex.body.id, quantity: 1 }),
      await api.delete(`/pets/${rex.body.id}`),
    ]) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
    }
    const gql = await api.post('/graphql', { query: `mutation { createPet(input: { name: "Ghost", categoryId: "${dogs.body.id}" }) { id } }` });
    expect(JSON.stringify(gql.body)).toContain('SERVICE_UNAVAILABLE');

    const pets = await api.get('/pets');
    expect(pets.status).toBe(200);
    expect(pets.body.map((x: { name: string }) => x.name)).toEqual(['Rex']);
    expect((await api.get(`/store/inventory/${rex.body.id}`)).body.quantity).toBe(1);
    expect((await api.get('/readyz')).status).toBe(503);
    expect((await api.get('/healthz')).status).toBe(200);

    ffs.heal();
    const freedAt = Date.now();
    expect(await eventually(async () => (await api.get('/readyz')).status === 200, 3_000)).toBe(true);
    expect(Date.now() - freedAt).toBeLessThan(1_000);
    const later = await api.post('/pets', { name: 'Later', categoryId: dogs.body.id });
    expect(later.status).toBe(201);
    expect(later.body.id).toBeGreaterThan(rex.body.id + 1); // the refused pet's id is skipped

    // A restart (on a copy of the directory, as a crash leaves it) finds exactly what was acknowledged.
    const image = crashImage(dir);
    await p.close();
    const { api: again } = await serve(image);
    expect((await again.get('/pets')).body.map((x: { name: string }) => x.name)).toEqual(['Rex', 'Later']);
  });
});

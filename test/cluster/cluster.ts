/**
 * Several gateway processes on one PostgreSQL and one Redis (CONTRACT section 13), as users run
 * them behind a load balancer: real server processes (`node --import tsx src/main.ts`) on
 * ephemeral loopback ports, started together on an empty database, with engines of their own
 * that a test may stop and start. Every request goes through `Api`, so every answer is checked
 * against the contract.
 */
import { startPostgres, type PostgresEngine } from '../engines/postgres.js';
import { startRedis, type RedisEngine } from '../engines/redis.js';
import { Api } from '../support/http.js';
import { ServerProcess, exitWithin } from '../support/process.js';

export const ADMIN = 'psk_enterprise_ClusterTestAdminKey0123456789abcdefXYZ';
const DATABASE = 'petstore';
/** Longest a gateway lives: the whole file's run, with room to spare. */
const HARD_TIMEOUT_MS = 600_000;

export interface Gateway {
  process: ServerProcess;
  port: number;
  url: string;
  admin: Api;
  /** This gateway as a client with `key`. */
  as(key: string): Api;
}

export interface Cluster {
  pg: PostgresEngine;
  redis: RedisEngine;
  databaseUrl: string;
  gateways: Gateway[];
  /** Starts one more gateway on the same engines. */
  add(): Promise<Gateway>;
  /** Gateways, SIGTERM; engines and their directories removed. */
  stop(): Promise<void>;
}

export async function startCluster(n: number, env: Record<string, string> = {}): Promise<Cluster> {
  const [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  await pg.sql(`CREATE DATABASE ${DATABASE}`);
  const databaseUrl = pg.url(DATABASE);
  const all: Gateway[] = [];
  const add = async (): Promise<Gateway> => {
    const p = new ServerProcess(
      { PETSTORE_DATABASE_URL: databaseUrl, PETSTORE_REDIS_URL: redis.url, PETSTORE_ADMIN_KEY: ADMIN, PETSTORE_SEED: 'false', ...env },
      HARD_TIMEOUT_MS,
    );
    const port = await p.port();
    const url = `http://127.0.0.1:${port}`;
    const g = { process: p, port, url, admin: new Api(url, ADMIN), as: (key: string) => new Api(url, key) };
    all.push(g);
    return g;
  };
  // All at once on the empty database: migrations and start-up take their locks.
  const gateways = await Promise.all(Array.from({ length: n }, add));
  return {
    pg,
    redis,
    databaseUrl,
    gateways,
    add,
    async stop() {
      await Promise.all(
        all.map(async (g) => {
          g.process.kill('SIGTERM');
          await exitWithin(g.process, 20_000).catch(() => g.process.kill());
        }),
      );
      await Promise.all([pg.destroy(), redis.remove()]);
    },
  };
}

/** A key made through the first gateway: its secret and id. */
export async function makeKey(admin: Api, body: Record<string, unknown>): Promise<{ key: string; id: number }> {
  const res = await admin.post('/admin/keys', { name: 'cluster key', ...body });
  if (res.status !== 201) throw new Error(`could not create key: ${res.text}`);
  return { key: res.body.key, id: res.body.id };
}

/** A pet with `stock` units in a new category. */
export async function makePet(admin: Api, name: string, stock: number): Promise<number> {
  const cat = await admin.post('/categories', { name: `${name} category` });
  if (cat.status !== 201) throw new Error(`could not create category: ${cat.text}`);
  const pet = await admin.post('/pets', { name, categoryId: cat.body.id });
  if (pet.status !== 201) throw new Error(`could not create pet: ${pet.text}`);
  const inv = await admin.put(`/store/inventory/${pet.body.id}`, { quantity: stock });
  if (inv.status !== 200) throw new Error(`could not set stock: ${inv.text}`);
  return pet.body.id;
}

/** Polls `check` every 50 ms until it holds; false after `ms`. */
export async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Occurrences of a log message (pino JSON on standard error) in a gateway's output. */
export function logged(g: Gateway, msg: RegExp): number {
  return g.process.stderr.split('\n').filter((l) => {
    try {
      return msg.test(JSON.parse(l).msg);
    } catch {
      return false;
    }
  }).length;
}

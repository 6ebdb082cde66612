/**
 * Several gateway processes on one PostgreSQL and one Redis (CONTRACT section 13), as users run
 * them behind a load balancer: real server processes (`node --import tsx src/main.ts`) on
 * ephemeral loopback ports, started together on an empty database, with engines of their own
 * that a test may stop and start. Every request goes through `Api`, so every answer is checked
 * against the contract.
 */
import { startPgBouncer, type PgBouncerEngine } from '../engines/pgbouncer.js';
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

export interface ClusterOptions {
  /**
   * Gateways reach PostgreSQL through a PgBouncer in transaction pooling mode (with
   * PETSTORE_DATABASE_DIRECT_URL for their sessions); otherwise directly.
   */
  pgbouncer?: boolean;
}

export interface Cluster {
  pg: PostgresEngine;
  redis: RedisEngine;
  bouncer?: PgBouncerEngine;
  /** The database, directly (with pg_stat_statements installed). */
  databaseUrl: string;
  /** Statements the gateways ran for requests since the last call (pg_stat_statements' calls; background work left out). */
  statements(): Promise<number>;
  gateways: Gateway[];
  /** Starts one more gateway on the same engines. */
  add(): Promise<Gateway>;
  /** Gateways, SIGTERM; engines and their directories removed. */
  stop(): Promise<void>;
}

export async function startCluster(n: number, env: Record<string, string> = {}, opts: ClusterOptions = {}): Promise<Cluster> {
  const [pg, redis] = await Promise.all([startPostgres({ statements: true }), startRedis()]);
  await pg.sql(`CREATE DATABASE ${DATABASE}`);
  await pg.sql('CREATE EXTENSION pg_stat_statements', DATABASE);
  const databaseUrl = pg.url(DATABASE);
  const bouncer = opts.pgbouncer ? await startPgBouncer(pg) : undefined;
  const urls: Record<string, string> = bouncer
    ? { PETSTORE_DATABASE_URL: bouncer.url(DATABASE), PETSTORE_DATABASE_DIRECT_URL: databaseUrl, PETSTORE_DATABASE_PREPARED: 'false' }
    : { PETSTORE_DATABASE_URL: databaseUrl };
  const all: Gateway[] = [];
  const add = async (): Promise<Gateway> => {
    const p = new ServerProcess({ ...urls, PETSTORE_REDIS_URL: redis.url, PETSTORE_ADMIN_KEY: ADMIN, PETSTORE_SEED: 'false', ...env }, HARD_TIMEOUT_MS);
    const port = await p.port();
    const url = `http://127.0.0.1:${port}`;
    const g = { process: p, port, url, admin: new Api(url, ADMIN), as: (key: string) => new Api(url, key) };
    all.push(g);
    return g;
  };
  // All at once on the empty database: migrations and start-up take their locks.
  const gateways = await Promise.all(Array.from({ length: n }, add));
  const statements = async () => {
    // Our own queries here are not the gateways', nor is what each gateway does in the background
    // whatever the requests (the event log's poll, the webhook engine's rounds): only the requests' statements count.
    const { rows } = await pg.sql(
      `SELECT coalesce(sum(calls), 0)::int AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = '${DATABASE}' AND s.query NOT ILIKE '%pg_stat_statements%'
         AND s.query NOT ILIKE '%event_log%' AND s.query NOT ILIKE '%webhook%'`,
      DATABASE,
    );
    await pg.sql('SELECT pg_stat_statements_reset()', DATABASE);
    return rows[0].n as number;
  };
  return {
    pg,
    redis,
    bouncer,
    databaseUrl,
    statements,
    gateways,
    add,
    async stop() {
      await Promise.all(
        all.map(async (g) => {
          g.process.kill('SIGTERM');
          await exitWithin(g.process, 20_000).catch(() => g.process.kill());
        }),
      );
      await bouncer?.destroy();
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

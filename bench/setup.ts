/**
 * Fixture set-up through the public API, before anything is measured: an enterprise staff key
 * whose limits the bench never reaches, a few categories, 150 pets, and a large stock on a
 * few of them so that orders never run out.
 */

export interface Fixture {
  /** Secret of the staff key every scenario sends. */
  staffKey: string;
  categoryIds: number[];
  petIds: number[];
  /** Pets with a stock of STOCK, for the order scenario. */
  stockedPetIds: number[];
}

/**
 * The highest per-minute limit POST /admin/keys accepts (NewKey.perMinute, schema/openapi.yaml):
 * a bucket of 1,000,000 refilled at ~16,667/s, far above what one run sends (a few hundred
 * thousand requests). perDay is the schema's maximum as well.
 */
export const KEY_LIMITS = { perMinute: 1_000_000, perDay: 1_000_000_000 };
export const CATEGORY_NAMES = ['Dogs', 'Cats', 'Birds', 'Fish'];
export const PET_COUNT = 150;
export const STOCKED_PETS = 5;
/** InventoryUpdate.quantity maximum. */
export const STOCK = 1_000_000;

export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export async function call(base: string, key: string | undefined, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (key) headers['X-API-Key'] = key;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

async function expect(base: string, key: string, method: string, path: string, status: number, body?: unknown): Promise<Record<string, unknown>> {
  const r = await call(base, key, method, path, body);
  if (r.status !== status) throw new Error(`set-up: ${method} ${path} answered ${r.status}, expected ${status}: ${r.text.slice(0, 500)}`);
  return r.body as Record<string, unknown>;
}

/** Runs fn over items with at most `limit` calls in flight (writes share fsyncs when they overlap). */
async function inParallel<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

export async function createFixture(base: string, adminKey: string): Promise<Fixture> {
  const created = await expect(base, adminKey, 'POST', '/admin/keys', 201, {
    name: 'bench staff',
    role: 'staff',
    plan: 'enterprise',
    ...KEY_LIMITS,
  });
  const staffKey = String(created.key);

  const categoryIds: number[] = [];
  for (const name of CATEGORY_NAMES) {
    const c = await expect(base, staffKey, 'POST', '/categories', 201, { name, description: `${name} for the bench` });
    categoryIds.push(Number(c.id));
  }

  const petIds = await inParallel(
    Array.from({ length: PET_COUNT }, (_, i) => i),
    8,
    async (i) => {
      const p = await expect(base, staffKey, 'POST', '/pets', 201, {
        name: `Bench pet ${String(i + 1).padStart(3, '0')}`,
        categoryId: categoryIds[i % categoryIds.length],
      });
      return Number(p.id);
    },
  );
  petIds.sort((a, b) => a - b);

  const stockedPetIds = petIds.slice(0, STOCKED_PETS);
  for (const id of stockedPetIds) {
    await expect(base, staffKey, 'PUT', `/store/inventory/${id}`, 200, { quantity: STOCK });
  }
  return { staffKey, categoryIds, petIds, stockedPetIds };
}

/**
 * "No lost data" under random writes (CONTRACT sections 2-4): a run of random REST writes, valid
 * and invalid mixed (creates, replaces, patches, deletes, orders, stock changes, keys), against a
 * model kept from what the server acknowledged. Every acknowledged (2xx) write echoes its input
 * (strings trimmed), every refusal leaves the records as they were, and afterwards every
 * acknowledged record reads back with the same fields, by id and in the lists; deleted ones are gone.
 *
 * The model is updated from the server's answers. Each run works only on the records it created
 * (and tags its category names), so a failing run replays and shrinks on the same server into a
 * self-contained counterexample. Seeds are fixed and logged (FC_SEED moves all of them).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, Res } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';
import { checkProperty, dateTime, describeRes, expectAlive, expectErrorObject, outcomeOf, paddedName, PROPERTY_TEST_TIMEOUT_MS, Tally } from './property-support.js';

// ---- the model ------------------------------------------------------------------------------

interface Category {
  id: number;
  name: string;
  description?: string;
}
interface Pet {
  id: number;
  name: string;
  categoryId: number;
  /** Units in stock, as the contract's transitions move them. */
  stock: number;
}
interface Order {
  id: number;
  petId: number;
  quantity: number;
  complete: boolean;
  shipDate?: string;
}
interface Key {
  id: number;
  name: string;
  role: string;
  plan: string;
  perMinute: number;
  perDay: number;
  createdAt: string;
}

class Model {
  readonly categories = new Map<number, Category>();
  readonly pets = new Map<number, Pet>();
  readonly orders = new Map<number, Order>();
  readonly keys = new Map<number, Key>();
  /** Ids acknowledged as deleted: they must stay gone. */
  readonly gone = { categories: new Set<number>(), pets: new Set<number>(), orders: new Set<number>() };
  /** The highest id acknowledged per collection: new ids come in creation order. */
  readonly lastId = { categories: 0, pets: 0, orders: 0, keys: 0 };

  openOrdersFor(petId: number): Order[] {
    return [...this.orders.values()].filter((o) => o.petId === petId && !o.complete);
  }
  /**
   * A category whose name equals `name` case-insensitively, other than `except`: `sure` when their
   * lower cases are equal, `maybe` when only a fuller case folding makes them equal (ß and SS).
   */
  clash(name: string, except?: number): { sure?: Category; maybe?: Category } {
    const others = [...this.categories.values()].filter((c) => c.id !== except);
    return {
      sure: others.find((c) => c.name.toLowerCase() === name.toLowerCase()),
      maybe: others.find((c) => c.name.toLowerCase() === name.toLowerCase() || c.name.toUpperCase() === name.toUpperCase() || c.name.toUpperCase().toLowerCase() === name.toUpperCase().toLowerCase()),
    };
  }
}

// ---- actions --------------------------------------------------------------------------------

/** A reference to an id chosen when the action runs: the n-th known record, or (n < 0) one that never existed. */
interface Ref {
  ref: 'categories' | 'pets' | 'orders';
  n: number;
}
type Body = Record<string, unknown>;
type Action =
  | { kind: 'createCategory' | 'createKey'; body: Body }
  | { kind: 'replaceCategory' | 'createPet' | 'replacePet' | 'patchPet' | 'placeOrder' | 'patchOrder' | 'setInventory'; target: Ref; body: Body }
  | { kind: 'deleteCategory' | 'deletePet' | 'cancelOrder'; target: Ref };

const NEVER = 424_242;
/** CONTRACT section 2: inventory quantities are 0-1,000,000. */
const MAX_STOCK = 1_000_000;
const refTo = (ref: Ref['ref']): fc.Arbitrary<Ref> =>
  fc.oneof({ weight: 9, arbitrary: fc.nat(9) }, { weight: 1, arbitrary: fc.constant(-1) }).map((n) => ({ ref, n }));

/** Invalid values of every sort, for any field. */
const badValue: fc.Arbitrary<unknown> = fc.constantFrom('', '   ', 'x'.repeat(101), '\ud800', 5, -1, 0, 1.5, 1e308, null, true, [], {}, 'AVAILABLE', 'lost', '2026-02-30T00:00:00Z', 'not a date', 1001, 1_000_001);

/**
 * A body from named fields: each valid, absent, or (now and then) invalid; sometimes an extra key
 * the contract rejects. Fields not listed in `optional` are left out only now and then.
 */
function bodyOf(fields: Record<string, fc.Arbitrary<unknown>>, opts: { optional?: string[]; extraKeys?: string[] } = {}): fc.Arbitrary<Body> {
  const names = Object.keys(fields);
  return fc
    .tuple(
      ...names.map((k) =>
        fc.oneof(
          { weight: 12, arbitrary: fields[k]!.map((v) => ({ v })) },
          { weight: opts.optional?.includes(k) ? 6 : 1, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: badValue.map((v) => ({ v })) },
        ),
      ),
      fc.oneof({ weight: 15, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(fc.constantFrom('id', '__proto__', 'constructor', ...(opts.extraKeys ?? [])), badValue) }),
    )
    .map((vals) => {
      const entries: [string, unknown][] = [];
      names.forEach((k, i) => {
        const x = vals[i] as { v: unknown } | undefined;
        if (x) entries.push([k, x.v]);
      });
      const extra = vals[names.length] as [string, unknown] | undefined;
      if (extra) entries.push(extra);
      return Object.fromEntries(entries); // own properties, "__proto__" included
    });
}

const categoryName = fc.oneof({ weight: 5, arbitrary: fc.tuple(paddedName, fc.nat(9999)).map(([n, i]) => `${n} ${i}`) }, { weight: 1, arbitrary: fc.constantFrom('Dogs', ' dogs ', 'CATS', 'Cats', 'ß', 'SS', 'İ', 'i̇') });
const description = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.constantFrom('', '  padded  ', 'é'.repeat(500)));
const petStatus = fc.constantFrom('available', 'pending', 'sold');

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: bodyOf({ name: categoryName, description }, { optional: ['description'] }).map((body) => ({ kind: 'createCategory' as const, body })) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replaceCategory' as const), target: refTo('categories'), body: bodyOf({ name: categoryName, description }, { optional: ['description'] }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteCategory' as const), target: refTo('categories') }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('createPet' as const), target: refTo('categories'), body: bodyOf({ name: paddedName, status: petStatus }, { optional: ['status'] }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replacePet' as const), target: refTo('pets'), body: bodyOf({ name: paddedName, categoryId: refTo('categories'), status: petStatus }, { optional: ['status'] }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('patchPet' as const), target: refTo('pets'), body: bodyOf({ name: paddedName, categoryId: refTo('categories'), status: petStatus }, { optional: ['name', 'categoryId', 'status'] }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deletePet' as const), target: refTo('pets') }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('placeOrder' as const), target: refTo('pets'), body: bodyOf({ quantity: fc.integer({ min: 1, max: 4 }), shipDate: dateTime }, { optional: ['shipDate'], extraKeys: ['complete'] }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('patchOrder' as const), target: refTo('orders'), body: bodyOf({ complete: fc.boolean(), shipDate: dateTime }, { optional: ['complete', 'shipDate'] }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancelOrder' as const), target: refTo('orders') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('setInventory' as const), target: refTo('pets'), body: bodyOf({ quantity: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constant(MAX_STOCK)) }) }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(bodyOf({ name: paddedName, role: fc.constantFrom('customer', 'staff', 'admin'), plan: fc.constantFrom('free', 'pro', 'business', 'enterprise') }), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000_000 }), fc.boolean())
      .map(([body, perMinute, perDay, limits]) => ({ kind: 'createKey' as const, body: limits || body.plan === 'enterprise' ? { ...body, perMinute, perDay } : body })),
  },
);

/** A run starts with a few valid creates, so its random writes have records to work on. */
const setupArb: fc.Arbitrary<Action[]> = fc
  .tuple(
    fc.array(fc.tuple(paddedName, fc.nat(99_999)).map(([n, i]): Action => ({ kind: 'createCategory', body: { name: `${n} ${i}` } })), { minLength: 1, maxLength: 2 }),
    fc.array(
      fc.record({ n: fc.nat(1), name: paddedName, status: fc.option(petStatus, { nil: undefined }) }).map(({ n, name, status }): Action => ({
        kind: 'createPet',
        target: { ref: 'categories', n },
        body: status === undefined ? { name } : { name, status },
      })),
      { minLength: 1, maxLength: 3 },
    ),
    fc.array(fc.record({ n: fc.nat(2), quantity: fc.integer({ min: 1, max: 5 }) }).map(({ n, quantity }): Action => ({ kind: 'setInventory', target: { ref: 'pets', n }, body: { quantity } })), { maxLength: 2 }),
  )
  .map(([categories, pets, stock]) => [...categories, ...pets, ...stock]);

const STATUSES = ['available', 'pending', 'sold'];

const PLAN_LIMITS: Record<string, { perMinute: number; perDay: number }> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};
const KEY_SECRET = /^psk_(free|pro|business|enterprise)_[0-9A-Za-z]{32,}$/;

const trimmed = (v: unknown): unknown => (typeof v === 'string' ? v.trim() : v);

// ---- what the contract accepts --------------------------------------------------------------

const isId = (v: unknown) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= Number.MAX_SAFE_INTEGER;
const isInt = (v: unknown, min: number, max: number) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
/** A string of `min`-`max` characters once trimmed, with no unpaired surrogate (CONTRACT sections 2 and 4). */
/** A name or description the contract accepts: well-formed, 1-100 (or 0-500) characters once trimmed, no control character (section 2). */
const isText = (v: unknown, min: number, max: number) =>
  typeof v === 'string' && v.isWellFormed() && !/[\u0000-\u001f\u007f-\u009f]/.test(v.trim()) && [...v.trim()].length >= min && [...v.trim()].length <= max;
const oneOf = (v: unknown, values: string[]) => typeof v === 'string' && values.includes(v);
const absentOr = (v: unknown, ok: (v: unknown) => boolean) => v === undefined || ok(v);
const onlyKeys = (body: Body, keys: string[]) => Object.keys(body).every((k) => keys.includes(k));
/** RFC 3339 date-times of the forms the runs send, with a real calendar day. */
function isDateTime(v: unknown): boolean {
  const m = typeof v === 'string' ? /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(Z|[+-]\d{2}:\d{2})$/.exec(v) : null;
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days && h < 24 && mi < 60 && s < 60;
}
/** Whether the contract accepts a write's body (else `400`, before anything else is looked at). */
function contractAccepts(kind: Action['kind'], b: Body): boolean | undefined {
  switch (kind) {
    case 'createCategory':
    case 'replaceCategory':
      return onlyKeys(b, ['name', 'description']) && isText(b.name, 1, 100) && absentOr(b.description, (v) => isText(v, 0, 500));
    case 'createPet':
    case 'replacePet':
      return onlyKeys(b, ['name', 'categoryId', 'status']) && isText(b.name, 1, 100) && isId(b.categoryId) && absentOr(b.status, (v) => oneOf(v, STATUSES));
    case 'patchPet':
      return onlyKeys(b, ['name', 'categoryId', 'status']) && absentOr(b.name, (v) => isText(v, 1, 100)) && absentOr(b.categoryId, isId) && absentOr(b.status, (v) => oneOf(v, STATUSES));
    case 'placeOrder':
      return onlyKeys(b, ['petId', 'quantity', 'shipDate']) && isId(b.petId) && isInt(b.quantity, 1, 1000) && absentOr(b.shipDate, isDateTime);
    case 'patchOrder':
      return onlyKeys(b, ['complete', 'shipDate']) && Object.keys(b).length > 0 && absentOr(b.complete, (v) => typeof v === 'boolean') && absentOr(b.shipDate, isDateTime);
    case 'setInventory':
      return onlyKeys(b, ['quantity']) && isInt(b.quantity, 0, 1_000_000);
    case 'createKey': {
      const limits = b.plan === 'enterprise' ? isInt(b.perMinute, 1, 1_000_000) && isInt(b.perDay, 1, 1_000_000_000) : b.perMinute === undefined && b.perDay === undefined;
      return onlyKeys(b, ['name', 'role', 'plan', 'perMinute', 'perDay']) && isText(b.name, 1, 100) && oneOf(b.role, ['customer', 'staff', 'admin']) && oneOf(b.plan, ['free', 'pro', 'business', 'enterprise']) && limits;
    }
    default:
      return undefined;
  }
}

// ---- the suite ------------------------------------------------------------------------------

describe('no lost data under random valid and invalid writes', () => {
  let t: TestServer;
  let api: Api & { keyId: number };
  const model = new Model();
  const tally = new Tally();

  beforeAll(async () => {
    t = await startServer();
    api = await t.client('admin', 'enterprise', { perMinute: 1_000_000, perDay: 1_000_000_000 });
    const keys = await api.get('/admin/keys?limit=100');
    for (const k of keys.body as Key[]) model.keys.set(k.id, k);
    model.lastId.keys = Math.max(...model.keys.keys());
  });
  afterAll(() => t.close());

  /**
   * The records this run created (deleted ones included), which its references pick from: runs do
   * not touch each other's records, so a shrunk counterexample replays on its own.
   */
  let runIds = { categories: [] as number[], pets: [] as number[], orders: [] as number[] };
  /** Each run's category names carry its own token (after any leading whitespace), so runs never clash. */
  let runToken = '';
  let runCount = 0;
  const withToken = (name: unknown): unknown => (typeof name === 'string' && name.trim() !== '' ? name.replace(/^(\s*)/, `$1${runToken}`) : name);

  /** The id a reference stands for now. */
  function resolve(r: Ref): number {
    if (r.n < 0) return NEVER;
    const ids = runIds[r.ref];
    return ids.length ? ids[r.n % ids.length]! : NEVER;
  }
  const resolveBody = (body: Body): Body =>
    Object.fromEntries(Object.entries(body).map(([k, v]) => [k, v !== null && typeof v === 'object' && 'ref' in (v as object) ? resolve(v as Ref) : v]));

  const nowIso = () => new Date(t.clock.now()).toISOString();

  /** Runs one action, updates the model from what the server acknowledged, and checks the answer against the model. */
  async function run(action: Action, touched: { categories: Set<number>; pets: Set<number>; orders: Set<number> }): Promise<void> {
    const problems: string[] = [];
    const want = (ok: boolean, problem: string) => {
      if (!ok) problems.push(problem);
    };
    let res: Res;
    let where: string;
    const send = async (method: string, path: string, body?: Body) => {
      res = await api.request(method, path, body === undefined ? {} : { body });
      where = `${describeRes(method, path, res)}${body === undefined ? '' : `\n  body: ${JSON.stringify(body).slice(0, 300)}`}`;
      tally.add(`${action.kind} ${outcomeOf(res)}`);
      // Every refusal as invalid is justified, and nothing the contract accepts is refused as invalid.
      const accepted = body === undefined ? undefined : contractAccepts(action.kind, body);
      if (accepted === true) want(res.status !== 400, 'a body the contract accepts was refused with 400');
      if (accepted === false) want(res.status === 400, 'a body the contract rejects was not refused with 400');
      return res;
    };
    const allowed = (statuses: number[]) => {
      want(statuses.includes(res.status), `status ${res.status} is not one of ${statuses.join('/')}`);
      if (res.status >= 400) expectErrorObject(res, where);
    };
    const code = () => (res.body as { code?: string }).code;

    switch (action.kind) {
      case 'createCategory':
      case 'replaceCategory': {
        const replace = action.kind === 'replaceCategory';
        const id = replace ? resolve(action.target) : undefined;
        if (id !== undefined) touched.categories.add(id);
        const body = resolveBody(action.body);
        if ('name' in body) body.name = withToken(body.name);
        await send(replace ? 'PUT' : 'POST', replace ? `/categories/${id}` : '/categories', body);
        allowed(replace ? [200, 400, 404, 409] : [201, 400, 409]);
        if (res!.status === 200 || res!.status === 201) {
          const c = res!.body as Category;
          const clash = model.clash(c.name, c.id).sure;
          const known = model.categories.has(c.id);
          model.categories.set(c.id, c);
          touched.categories.add(c.id);
          const expected: Category = { id: c.id, name: trimmed(body.name) as string };
          if (body.description !== undefined) expected.description = trimmed(body.description) as string;
          want(JSON.stringify(c) === JSON.stringify(expected) || isDeepEqual(c, expected), `acknowledged ${JSON.stringify(c)}, sent ${JSON.stringify(expected)}`);
          want(!clash, `name taken by category ${clash?.id} (${clash?.name}) was accepted`);
          if (replace) want(known && c.id === id, `replaced category ${id} that the model does not hold`);
          else {
            want(!known && !model.gone.categories.has(c.id) && c.id > model.lastId.categories, `new category id ${c.id} reused or out of order`);
            want(res!.headers.get('location') === `/categories/${c.id}`, `Location ${res!.headers.get('location')}`);
            runIds.categories.push(c.id);
            model.lastId.categories = Math.max(model.lastId.categories, c.id);
          }
        } else if (res!.status === 404) want(!model.categories.has(id!), `404 for category ${id}, acknowledged before`);
        else if (res!.status === 409) want(code() === 'CATEGORY_EXISTS' && !!model.clash(String(trimmed(body.name)), id).maybe, `409 ${code()} without a clash in the model`);
        break;
      }
      case 'deleteCategory': {
        const id = resolve(action.target);
        touched.categories.add(id);
        await send('DELETE', `/categories/${id}`);
        allowed([204, 404, 409]);
        const inUse = [...model.pets.values()].some((p) => p.categoryId === id);
        if (res!.status === 204) {
          want(model.categories.has(id) && !inUse, `deleted category ${id}: held by the model ${model.categories.has(id)}, in use ${inUse}`);
          model.categories.delete(id);
          model.gone.categories.add(id);
        } else if (res!.status === 404) want(!model.categories.has(id), `404 for category ${id}, acknowledged before`);
        else want(code() === 'CATEGORY_IN_USE' && inUse, `409 ${code()} for category ${id}, in use ${inUse}`);
        break;
      }
      case 'createPet':
      case 'replacePet':
      case 'patchPet': {
        const create = action.kind === 'createPet';
        const id = create ? undefined : resolve(action.target);
        const body = create ? { ...resolveBody(action.body), categoryId: resolve(action.target) } : resolveBody(action.body);
        const before = id === undefined ? undefined : model.pets.get(id);
        if (id !== undefined) touched.pets.add(id);
        await send(create ? 'POST' : action.kind === 'replacePet' ? 'PUT' : 'PATCH', create ? '/pets' : `/pets/${id}`, body);
        allowed(create ? [201, 400, 422] : [200, 400, 404, 409, 422]);
        if (res!.status === 200 || res!.status === 201) {
          const p = res!.body as { id: number; name: string; categoryId: number; status: string };
          const stock = create ? (p.status === 'available' ? 1 : 0) : (before?.stock ?? 0);
          model.pets.set(p.id, { id: p.id, name: p.name, categoryId: p.categoryId, stock });
          touched.pets.add(p.id);
          const name = body.name !== undefined ? trimmed(body.name) : before?.name;
          const categoryId = body.categoryId !== undefined ? body.categoryId : before?.categoryId;
          want(p.name === name && p.categoryId === categoryId, `acknowledged ${JSON.stringify(p)}, sent ${JSON.stringify(body)}`);
          want(model.categories.has(p.categoryId), `pet ${p.id} acknowledged in category ${p.categoryId}, which the model does not hold`);
          if (create) {
            want(p.status === (body.status ?? 'available'), `created with status ${p.status}, asked ${String(body.status)}`);
            want(!model.gone.pets.has(p.id) && p.id > model.lastId.pets, `new pet id ${p.id} reused or out of order`);
            want(res!.headers.get('location') === `/pets/${p.id}`, `Location ${res!.headers.get('location')}`);
            runIds.pets.push(p.id);
            model.lastId.pets = Math.max(model.lastId.pets, p.id);
          } else {
            want(!!before, `updated pet ${id} that the model does not hold`);
            want(p.status === (stock > 0 ? 'available' : p.status) && (stock > 0) === (p.status === 'available'), `status ${p.status} with stock ${stock}`);
          }
        } else if (res!.status === 404) want(!before, `404 for pet ${id}, acknowledged before`);
        else if (res!.status === 422) want(code() === 'UNKNOWN_CATEGORY' && !model.categories.has(body.categoryId as number), `422 ${code()} for category ${String(body.categoryId)}`);
        else if (res!.status === 409) want(code() === 'INVALID_TRANSITION' && body.status !== undefined, `409 ${code()} without a status change`);
        break;
      }
      case 'deletePet': {
        const id = resolve(action.target);
        touched.pets.add(id);
        await send('DELETE', `/pets/${id}`);
        allowed([204, 404, 409]);
        const open = model.openOrdersFor(id).length;
        if (res!.status === 204) {
          want(model.pets.has(id) && open === 0, `deleted pet ${id}: held by the model ${model.pets.has(id)}, open orders ${open}`);
          model.pets.delete(id);
          model.gone.pets.add(id);
        } else if (res!.status === 404) want(!model.pets.has(id), `404 for pet ${id}, acknowledged before`);
        else want(code() === 'PET_HAS_OPEN_ORDERS' && open > 0, `409 ${code()} for pet ${id} with ${open} open orders`);
        break;
      }
      case 'placeOrder': {
        const petId = resolve(action.target);
        const body: Body = { ...resolveBody(action.body), petId };
        const pet = model.pets.get(petId);
        await send('POST', '/store/orders', body);
        allowed([201, 400, 409, 422]);
        const q = body.quantity as number;
        if (res!.status === 201) {
          const o = res!.body as Order;
          model.orders.set(o.id, o);
          touched.orders.add(o.id);
          touched.pets.add(o.petId);
          if (pet) pet.stock -= o.quantity;
          const expected: Order = { id: o.id, petId, quantity: q, complete: false };
          if (body.shipDate !== undefined) expected.shipDate = trimmed(body.shipDate) as string;
          want(isDeepEqual(o, expected), `acknowledged ${JSON.stringify(o)}, expected ${JSON.stringify(expected)}`);
          want(!!pet && pet.stock + q >= q, `order of ${q} placed for pet ${petId} with stock ${pet ? pet.stock + q : 'none'}`);
          want(!model.gone.orders.has(o.id) && o.id > model.lastId.orders, `new order id ${o.id} reused or out of order`);
          runIds.orders.push(o.id);
          model.lastId.orders = Math.max(model.lastId.orders, o.id);
        } else if (res!.status === 422) want(code() === 'UNKNOWN_PET' && !pet, `422 ${code()} for pet ${petId}`);
        else if (res!.status === 409) {
          const expected = !pet ? 'none' : pet.stock === 0 ? 'PET_NOT_AVAILABLE' : pet.stock < q ? 'INSUFFICIENT_STOCK' : 'none';
          want(code() === expected, `409 ${code()} for ${q} of pet ${petId} with stock ${pet?.stock}`);
        } else if (res!.status === 400 && pet && Number.isInteger(q) && q >= 1 && q <= 1000 && Object.keys(body).every((k) => ['petId', 'quantity', 'shipDate'].includes(k)) && (body.shipDate === undefined || typeof body.shipDate === 'string')) {
          // Refused as invalid: only a bad shipDate can explain it.
          want(body.shipDate !== undefined, `400 for a valid order ${JSON.stringify(body)}`);
        }
        break;
      }
      case 'patchOrder': {
        const id = resolve(action.target);
        const body = resolveBody(action.body);
        const before = model.orders.get(id);
        touched.orders.add(id);
        await send('PATCH', `/store/orders/${id}`, body);
        allowed([200, 400, 404, 409]);
        if (res!.status === 200) {
          const o = res!.body as Order;
          model.orders.set(o.id, o);
          touched.orders.add(o.id);
          const complete = (before?.complete ?? false) || body.complete === true;
          const expected: Order = { id, petId: before?.petId ?? -1, quantity: before?.quantity ?? -1, complete };
          const shipDate = body.shipDate !== undefined ? (trimmed(body.shipDate) as string) : (before?.shipDate ?? (complete ? nowIso() : undefined));
          if (shipDate !== undefined) expected.shipDate = shipDate;
          want(isDeepEqual(o, expected), `acknowledged ${JSON.stringify(o)}, expected ${JSON.stringify(expected)}`);
          want(!!before && !before.complete, `patched order ${id}: held ${!!before}, complete ${before?.complete}`);
        } else if (res!.status === 404) want(!before, `404 for order ${id}, acknowledged before`);
        else if (res!.status === 409) want(code() === 'ORDER_COMPLETE' && !!before?.complete, `409 ${code()} for order ${id}, complete ${before?.complete}`);
        break;
      }
      case 'cancelOrder': {
        const id = resolve(action.target);
        touched.orders.add(id);
        const before = model.orders.get(id);
        await send('DELETE', `/store/orders/${id}`);
        allowed([204, 404, 409]);
        if (res!.status === 204) {
          want(!!before && !before.complete, `cancelled order ${id}: held ${!!before}, complete ${before?.complete}`);
          model.orders.delete(id);
          model.gone.orders.add(id);
          const pet = before && model.pets.get(before.petId);
          if (pet) {
            // Section 3 returns the units; section 2 bounds a stock at 1,000,000, so it stays at the bound.
            pet.stock = Math.min(MAX_STOCK, pet.stock + before.quantity);
            touched.pets.add(pet.id);
          }
        } else if (res!.status === 404) want(!before, `404 for order ${id}, acknowledged before`);
        else want(code() === 'ORDER_COMPLETE' && !!before?.complete, `409 ${code()} for order ${id}, complete ${before?.complete}`);
        break;
      }
      case 'setInventory': {
        const id = resolve(action.target);
        const body = resolveBody(action.body);
        const pet = model.pets.get(id);
        touched.pets.add(id);
        await send('PUT', `/store/inventory/${id}`, body);
        allowed([200, 400, 404]);
        if (res!.status === 200) {
          const item = res!.body as { petId: number; quantity: number; status: string };
          if (pet) pet.stock = item.quantity;
          touched.pets.add(id);
          const q = body.quantity as number;
          const status = q > 0 ? 'available' : model.openOrdersFor(id).length > 0 ? 'pending' : 'sold';
          want(isDeepEqual(item, { petId: id, quantity: q, status }), `acknowledged ${JSON.stringify(item)}, expected quantity ${q} and status ${status}`);
          want(!!pet, `stock set for pet ${id} that the model does not hold`);
        } else if (res!.status === 404) want(!pet, `404 for pet ${id}, acknowledged before`);
        break;
      }
      case 'createKey': {
        const body = action.body;
        await send('POST', '/admin/keys', body);
        allowed([201, 400]);
        if (res!.status === 201) {
          const { key, ...k } = res!.body as Key & { key: string };
          model.keys.set(k.id, k);
          const limits = body.plan === 'enterprise' ? { perMinute: body.perMinute, perDay: body.perDay } : PLAN_LIMITS[body.plan as string];
          const expected = { id: k.id, name: trimmed(body.name), role: body.role, plan: body.plan, ...limits, createdAt: nowIso() };
          want(isDeepEqual(k, expected), `acknowledged ${JSON.stringify(k)}, expected ${JSON.stringify(expected)}`);
          want(KEY_SECRET.test(key), `secret ${key}`);
          want(k.id > model.lastId.keys, `new key id ${k.id} reused or out of order`);
          model.lastId.keys = Math.max(model.lastId.keys, k.id);
        }
        break;
      }
    }
    expect(problems, where!).toEqual([]);
  }

  /** Every touched record reads back as the model says: same fields, or 404 once deleted. */
  async function verify(touched: { categories: Set<number>; pets: Set<number>; orders: Set<number> }): Promise<void> {
    for (const id of touched.categories) {
      const res = await api.get(`/categories/${id}`);
      const c = model.categories.get(id);
      if (c) expect(res.body, `category ${id} reads back as acknowledged`).toEqual(c);
      else expect(res.status, `category ${id} stays gone`).toBe(404);
    }
    const petIds = [...touched.pets];
    for (let i = 0; i < petIds.length; i += 100) {
      const chunk = petIds.slice(i, i + 100);
      const res = await api.get(`/pets?ids=${chunk.join(',')}&limit=100`);
      const byId = new Map((res.body as { id: number }[]).map((p) => [p.id, p]));
      for (const id of chunk) {
        const p = model.pets.get(id);
        if (!p) {
          expect(byId.has(id), `pet ${id} stays gone`).toBe(false);
          continue;
        }
        const inv = await api.get(`/store/inventory/${id}`);
        expect(byId.get(id), `pet ${id} reads back as acknowledged`).toEqual({ id, name: p.name, categoryId: p.categoryId, status: inv.body.status });
        expect(inv.body.quantity, `stock of pet ${id}`).toBe(p.stock);
        expect(inv.body.status === 'available', `pet ${id} is available exactly when it has stock (${p.stock})`).toBe(p.stock > 0);
      }
    }
    for (const id of touched.orders) {
      const res = await api.get(`/store/orders/${id}`);
      const o = model.orders.get(id);
      if (o) expect(res.body, `order ${id} reads back as acknowledged`).toEqual(o);
      else expect(res.status, `order ${id} stays gone`).toBe(404);
    }
  }

  /** Every page of a listing, following `Link: rel="next"`. */
  async function listAll<T>(path: string): Promise<T[]> {
    const all: T[] = [];
    let next: string | undefined = `${path}?limit=100`;
    while (next) {
      const res: Res = await api.get(next);
      expect(res.status).toBe(200);
      all.push(...(res.body as T[]));
      next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }
    return all;
  }

  it('reads back every acknowledged write with the same fields after runs of random valid and invalid writes', async () => {
    await checkProperty(
      'random writes',
      fc.asyncProperty(fc.tuple(setupArb, fc.array(actionArb, { minLength: 1, maxLength: 40 })).map(([setup, more]) => [...setup, ...more]), async (actions) => {
        runIds = { categories: [], pets: [], orders: [] };
        runToken = `r${++runCount}_`;
        const touched = { categories: new Set<number>(), pets: new Set<number>(), orders: new Set<number>() };
        for (const action of actions) await run(action, touched);
        await verify(touched);
        await expectAlive(t);
      }),
      120,
      tally,
    );

    // And the lists hold exactly the model's records, with the same fields.
    const categories = await listAll<Category>('/categories');
    expect(categories).toEqual([...model.categories.values()].sort((a, b) => a.id - b.id));
    const pets = await listAll<{ id: number; name: string; categoryId: number }>('/pets');
    expect(pets.map(({ id, name, categoryId }) => ({ id, name, categoryId }))).toEqual([...model.pets.values()].sort((a, b) => a.id - b.id).map(({ id, name, categoryId }) => ({ id, name, categoryId })));
    const inventory = await listAll<{ petId: number; quantity: number }>('/store/inventory');
    expect(inventory.map((i) => [i.petId, i.quantity])).toEqual([...model.pets.values()].sort((a, b) => a.id - b.id).map((p) => [p.id, p.stock]));
    const orders = await listAll<Order>('/store/orders');
    expect(orders).toEqual([...model.orders.values()].sort((a, b) => a.id - b.id));
    const keys = await listAll<Key>('/admin/keys');
    expect(keys).toEqual([...model.keys.values()].sort((a, b) => a.id - b.id));
    expect(model.categories.size + model.pets.size + model.orders.size, 'the runs acknowledged writes').toBeGreaterThan(0);
  }, PROPERTY_TEST_TIMEOUT_MS);
});

/** Deep equality with key order ignored and undefined-valued keys counted as absent. */
function isDeepEqual(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(norm) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, x]) => [k, norm(x)])) : v;
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

/**
 * The export format (CONTRACT section 10): JSON Lines, one `{"type","record"}` per record, types
 * pet, category, order, key, ban, idempotency and event in ascending id (scope, sequence) order,
 * then exactly one `counters` line last, so a cut-off file is recognised (it also holds the event
 * log's latest sequence, `events`, and `eventsOldest`, below which events were dropped). Key records carry their hash, never a
 * secret (the store holds none). Reading checks every record's shape, ids and counters, and names
 * the line of the first problem.
 */
import { EVENT_TYPES } from '../service/events.js';
import type { CounterName, WebhookCounterName } from '../service/store-port.js';
import { PET_STATUSES, PLANS, ROLES } from '../service/records.js';
import { DELIVERY_STATUSES, WEBHOOK_STATUSES } from '../service/webhook-records.js';
import { COUNTER_NAMES, emptyCounters, type StoreData } from '../store/memory/change-set.js';

const SECTIONS = { pet: 'pets', category: 'categories', order: 'orders', key: 'keys', ban: 'bans', idempotency: 'idempotency', event: 'events', webhook: 'webhooks', delivery: 'deliveries' } as const;
type RecordType = keyof typeof SECTIONS;

export class ImportError extends Error {
  constructor(
    readonly line: number,
    detail: string,
  ) {
    super(`line ${line}: ${detail}`);
  }
}

/** Every line of the export of `d`, each ending in a newline. */
export function* exportLines(d: StoreData): Generator<string> {
  const byId = <T extends { id: number }>(a: T[]) => [...a].sort((x, y) => x.id - y.id);
  const line = (type: string, record: unknown) => `${JSON.stringify({ type, record })}\n`;
  for (const r of byId(d.pets)) yield line('pet', r);
  for (const r of byId(d.categories)) yield line('category', r);
  for (const r of byId(d.orders)) yield line('order', r);
  for (const r of byId(d.keys)) yield line('key', r);
  for (const r of [...d.bans].sort((x, y) => x.keyId - y.keyId)) yield line('ban', r);
  for (const r of [...d.idempotency].sort((x, y) => (x.scope < y.scope ? -1 : x.scope > y.scope ? 1 : 0))) yield line('idempotency', r);
  for (const r of d.events ?? []) yield line('event', r);
  for (const r of byId(d.webhooks ?? [])) yield line('webhook', r);
  for (const r of byId(d.deliveries ?? [])) yield line('delivery', r);
  yield line('counters', { ...d.counters, eventsOldest: d.eventsOldest ?? 1 });
}

type Check = (r: Record<string, unknown>) => string | undefined;

const int = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const str = (v: unknown) => typeof v === 'string';
const optStr = (v: unknown) => v === undefined || typeof v === 'string';
const oneOf = (list: readonly string[]) => (v: unknown) => typeof v === 'string' && list.includes(v);

function fields(spec: Record<string, (v: unknown) => boolean>): Check {
  return (r) => {
    for (const [name, ok] of Object.entries(spec)) if (!ok(r[name])) return `bad or missing "${name}"`;
    return undefined;
  };
}

const CHECKS: Record<RecordType, Check> = {
  pet: fields({ id: (v) => int(v, 1), name: str, categoryId: (v) => int(v, 1), status: oneOf(PET_STATUSES), stock: (v) => int(v, 0, 1_000_000) }),
  category: fields({ id: (v) => int(v, 1), name: str, description: optStr }),
  order: fields({ id: (v) => int(v, 1), petId: (v) => int(v, 1), quantity: (v) => int(v, 1, 1_000), complete: (v) => typeof v === 'boolean', ownerKeyId: (v) => int(v, 0), shipDate: optStr }),
  key: fields({
    id: (v) => int(v, 1),
    name: str,
    role: oneOf(ROLES),
    plan: oneOf(PLANS),
    perMinute: (v) => int(v, 1),
    perDay: (v) => int(v, 1),
    createdAt: str,
    hash: (v) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v),
  }),
  ban: fields({ keyId: (v) => int(v, 1), until: (v) => int(v, 0), history: (v) => Array.isArray(v) && v.every((t) => int(t, 0)) }),
  idempotency: fields({ scope: (v) => typeof v === 'string' && v.length > 0, fingerprint: str, createdAt: (v) => int(v, 0) }),
  webhook: fields({
    id: (v) => int(v, 1),
    ownerKeyId: (v) => int(v, 0),
    url: str,
    types: (v) => Array.isArray(v) && v.every(str),
    description: optStr,
    status: oneOf(WEBHOOK_STATUSES),
    secret: (v) => typeof v === 'string' && v.startsWith('whsec_'),
    createdAt: str,
    afterSequence: (v) => int(v, 0),
  }),
  delivery: fields({
    id: (v) => int(v, 1),
    endpointId: (v) => int(v, 1),
    event: (v) => typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string',
    status: oneOf(DELIVERY_STATUSES),
    attempts: (v) => Array.isArray(v),
    nextAttemptAt: (v) => v === undefined || int(v, 0),
    createdAt: str,
    firstDueAt: (v) => int(v, 0),
  }),
  event: fields({
    sequence: (v) => int(v, 1),
    type: oneOf(EVENT_TYPES),
    createdAt: str,
    data: (v) => typeof v === 'object' && v !== null && typeof (v as { object?: unknown }).object === 'object',
    ownerKeyId: (v) => v === undefined || int(v, 0),
  }),
};

/** Reads an export, line by line (numbered from 1), into the store's data. */
export async function readExport(lines: AsyncIterable<string>): Promise<StoreData> {
  const data: Required<Omit<StoreData, 'rawEvents'>> = { pets: [], categories: [], orders: [], keys: [], idempotency: [], bans: [], events: [], eventsOldest: 1, webhooks: [], deliveries: [], counters: emptyCounters() };
  const seen = new Set<string>();
  let counters = false;
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    if (counters) throw new ImportError(n, 'nothing may follow the counters line');
    let line: { type?: unknown; record?: unknown };
    try {
      line = JSON.parse(text) as typeof line;
    } catch {
      throw new ImportError(n, 'not JSON');
    }
    const record = line?.record as Record<string, unknown> | undefined;
    if (typeof record !== 'object' || record === null || Array.isArray(record)) throw new ImportError(n, 'no "record" object');
    if (line.type === 'counters') {
      for (const name of COUNTER_NAMES) {
        if (!int(record[name], 0)) throw new ImportError(n, `bad or missing counter "${name}"`);
        data.counters[name] = record[name] as number;
      }
      for (const name of ['events', 'eventsOldest'] as const) {
        if (record[name] !== undefined && !int(record[name], name === 'events' ? 0 : 1)) throw new ImportError(n, `bad counter "${name}"`);
      }
      data.counters.events = (record.events as number | undefined) ?? data.events.at(-1)?.sequence ?? 0;
      data.eventsOldest = (record.eventsOldest as number | undefined) ?? 1;
      for (const name of ['webhooks', 'deliveries', 'webhookCursor'] as const) {
        if (record[name] !== undefined && !int(record[name], 0)) throw new ImportError(n, `bad counter "${name}"`);
        data.counters[name] = (record[name] as number | undefined) ?? 0;
      }
      counters = true;
      continue;
    }
    const type = line.type as RecordType;
    if (!Object.hasOwn(CHECKS, type)) throw new ImportError(n, `unknown type ${JSON.stringify(line.type)}`);
    const problem = CHECKS[type](record);
    if (problem) throw new ImportError(n, `${type}: ${problem}`);
    const key = `${type}:${String(record.id ?? record.keyId ?? record.scope ?? record.sequence)}`;
    if (seen.has(key)) throw new ImportError(n, `a second ${type} with the same id`);
    seen.add(key);
    if (type === 'event' && (record.sequence as number) <= (data.events.at(-1)?.sequence ?? 0)) {
      throw new ImportError(n, 'events must come in ascending sequence');
    }
    (data[SECTIONS[type]] as unknown[]).push(record);
  }
  if (!counters) throw new ImportError(n, 'no counters line: the file is not a whole export');
  checkCounters(data, n);
  return data;
}

/** Counters at least the highest ids (else an id would be handed out twice), and pets in categories that exist. */
function checkCounters(d: StoreData, line: number): void {
  const max = (a: { id: number }[]) => a.reduce((m, r) => Math.max(m, r.id), 0);
  const pairs: [CounterName | WebhookCounterName, number][] = [
    ['pets', max(d.pets)],
    ['categories', max(d.categories)],
    ['orders', max(d.orders)],
    ['keys', max(d.keys)],
    ['webhooks', max(d.webhooks ?? [])],
    ['deliveries', max(d.deliveries ?? [])],
  ];
  for (const [name, highest] of pairs) {
    if ((d.counters[name] ?? 0) < highest) throw new ImportError(line, `counter "${name}" is ${d.counters[name] ?? 0}, below the highest id ${highest}`);
  }
  const lastEvent = d.events?.at(-1)?.sequence ?? 0;
  if ((d.counters.events ?? 0) < lastEvent) throw new ImportError(line, `counter "events" is ${d.counters.events}, below the highest sequence ${lastEvent}`);
  const categories = new Set(d.categories.map((c) => c.id));
  const orphan = d.pets.find((p) => !categories.has(p.categoryId));
  if (orphan) throw new ImportError(line, `pet ${orphan.id} is in category ${orphan.categoryId}, which the file does not hold`);
}

/**
 * Snapshots on their own (CONTRACT section 10): one header line { format, version, seq, length,
 * sha256 } and the body; written atomically (no temporary file left behind, an old snapshot
 * replaced whole); a body that does not match its length or SHA-256, or a header that is not a
 * header, is CorruptFileError naming the file, and reading never changes the file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptFileError } from './journal.js';
import type { StoreData } from '../memory/memory-store.js';
import type { PetRecord } from '../../service/records.js';
import { nodeFs } from './fs.js';
import { sourceOfData, writeSnapshot as writeSource } from './snapshot.js';
import { readSnapshot } from '../../../test/support/data-dir-files.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-snapshot-'));
  file = join(dir, 'snapshot.json');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const UNICODE = 'Katzen 🐈‍⬛ 𝒜𝓈𝓉𝓇𝒶𝓁 𠀋 العربية עברית a\u0308o\u0308 \u2028line\u2029para "quoted" \\ end';

function sample(name = 'Cats'): StoreData {
  return {
    pets: [{ id: 1, name: 'Tom', categoryId: 1, status: 'available', stock: 3 }],
    categories: [{ id: 1, name, description: UNICODE }],
    orders: [{ id: 1, petId: 1, quantity: 1, complete: false, ownerKeyId: 0, shipDate: '2026-11-24T10:00:00.000Z' }],
    keys: [
      {
        id: 1,
        name: 'k',
        role: 'customer',
        plan: 'free',
        perMinute: 60,
        perDay: 1000,
        createdAt: '2026-11-23T12:00:00.000Z',
        hash: 'ab'.repeat(32),
      },
    ],
    idempotency: [{ scope: '1:abc', fingerprint: 'fp', outcome: { status: 201, body: { id: 1 } }, createdAt: 1 }],
    bans: [{ keyId: 1, until: 2, history: [1] }],
    events: [
      { sequence: 3, type: 'category.created', createdAt: '2026-11-23T12:00:00.000Z', data: { object: { id: 2, name: 'C' } } },
      { sequence: 4, type: 'order.placed', createdAt: '2026-11-23T12:00:01.000Z', data: { object: { id: 1, petId: 1, quantity: 1, complete: false } }, ownerKeyId: 1 },
    ],
    eventsOldest: 3,
    webhooks: [
      { id: 1, ownerKeyId: 1, url: 'https://example.com/hook', types: ['order.*'], status: 'enabled', secret: 'whsec_AAAA', createdAt: '2026-11-23T12:00:00.000Z', afterSequence: 2 },
    ],
    deliveries: [
      {
        id: 1,
        endpointId: 1,
        event: { id: 'evt_4', type: 'order.placed', sequence: 4, createdAt: '2026-11-23T12:00:01.000Z', data: { object: { id: 1 } } },
        status: 'pending',
        attempts: [{ at: '2026-11-23T12:00:02.000Z', error: 'timeout', durationMs: 10_000 }],
        nextAttemptAt: 5,
        createdAt: '2026-11-23T12:00:01.000Z',
        firstDueAt: 1,
      },
    ],
    counters: { pets: 1, categories: 2, orders: 1, keys: 1, events: 4, webhooks: 1, deliveries: 1, webhookCursor: 4 },
  };
}

function writeSnapshot(f: string, snap: { seq: number; data: StoreData }): Promise<number> {
  return writeSource(nodeFs, f, snap.seq, sourceOfData(snap.data));
}

function readError(f: string): unknown {
  try {
    readSnapshot(f);
  } catch (e) {
    return e;
  }
  return undefined;
}

function expectCorrupt(f: string): void {
  const before = readFileSync(f);
  const err = readError(f);
  expect(err).toBeInstanceOf(CorruptFileError);
  expect((err as CorruptFileError).file).toBe(f);
  expect((err as CorruptFileError).message).toContain('snapshot.json');
  expect(readFileSync(f).equals(before)).toBe(true);
}

describe('writing and reading a snapshot', () => {
  it('writes a header line with format, version, seq, the body length and its SHA-256, then the body', async () => {
    await writeSnapshot(file, { seq: 17, data: sample() });
    const bytes = readFileSync(file);
    const nl = bytes.indexOf(0x0a);
    const header = JSON.parse(bytes.subarray(0, nl).toString('utf8'));
    const body = bytes.subarray(nl + 1);
    expect(header).toEqual({
      format: 'petstore-snapshot',
      version: 1,
      seq: 17,
      length: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
    // The JSON of the store without its events, then one line per event, its fields before its data.
    const [json, ...lines] = body.toString('utf8').split('\n');
    const { events, ...records } = sample();
    // eventRuns: event 0 has sequence 3 and the rest count up from it (event-log.ts Runs)
    expect(JSON.parse(json!)).toEqual({ ...records, eventRuns: [[0, 3]] });
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(events);
    expect(lines[1]).toBe(
      '{"sequence":4,"type":"order.placed","createdAt":"2026-11-23T12:00:01.000Z","ownerKeyId":1,"data":{"object":{"id":1,"petId":1,"quantity":1,"complete":false}}}',
    );
    // The header line is padded so the writer can put it in place after the body.
    expect(nl).toBe(255);
  });

  it('writes a large store in many slices of a few milliseconds and reads it back whole', async () => {
    const data = sample();
    data.pets = Array.from({ length: 20_000 }, (_, i): PetRecord => ({ id: i + 1, name: `Pet ${i + 1} 🐾`, categoryId: 1, status: 'available', stock: i }));
    data.counters.pets = 20_000;
    let chunks = 0;
    const counting = {
      ...nodeFs,
      async open(path: string, mode: Parameters<typeof nodeFs.open>[1]) {
        const h = await nodeFs.open(path, mode);
        return { ...h, write: (b: Uint8Array, pos: number) => (chunks++, h.write(b, pos)), datasync: () => h.datasync(), sync: () => h.sync(), truncate: (n: number) => h.truncate(n), stat: () => h.stat(), close: () => h.close() };
      },
    };
    const size = await writeSource(counting, file, 4, sourceOfData(data), { sliceMs: 0 });
    expect(chunks).toBeGreaterThan(100);
    expect(size).toBe(readFileSync(file).length);
    expect(readSnapshot(file)).toEqual({ seq: 4, data });
  });

  it('stops between slices when aborted, leaving the old snapshot and no temporary file', async () => {
    await writeSnapshot(file, { seq: 1, data: sample('Old') });
    const data = sample('New');
    data.pets = Array.from({ length: 5_000 }, (_, i): PetRecord => ({ id: i + 1, name: `Pet ${i + 1}`, categoryId: 1, status: 'available', stock: 1 }));
    const ac = new AbortController();
    ac.abort();
    await expect(writeSource(nodeFs, file, 2, sourceOfData(data), { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(readdirSync(dir)).toEqual(['snapshot.json']);
    expect(readSnapshot(file)).toEqual({ seq: 1, data: sample('Old') });
  });

  it('reads back the same seq and data, Unicode byte for byte', async () => {
    await writeSnapshot(file, { seq: 3, data: sample(UNICODE) });
    const snap = readSnapshot(file)!;
    expect(snap.seq).toBe(3);
    expect(snap.data).toEqual(sample(UNICODE));
    expect(Buffer.from(snap.data.categories[0]!.name, 'utf8').equals(Buffer.from(UNICODE, 'utf8'))).toBe(true);
  });

  it('reads a snapshot whose events are in the JSON (written before the event lines), and one without events', async () => {
    const data = sample();
    for (const d of [data, { ...data, events: undefined, eventsOldest: undefined, counters: { pets: 1, categories: 2, orders: 1, keys: 1 } }]) {
      const body = Buffer.from(JSON.stringify(d), 'utf8');
      const header = JSON.stringify({ format: 'petstore-snapshot', version: 1, seq: 9, length: body.length, sha256: createHash('sha256').update(body).digest('hex') });
      writeFileSync(file, Buffer.concat([Buffer.from(`${header.padEnd(255, ' ')}\n`), body]));
      expect(readSnapshot(file)).toEqual({ seq: 9, data: JSON.parse(JSON.stringify(d)) });
    }
  });

  it('answers undefined when there is no snapshot yet', () => {
    expect(readSnapshot(file)).toBeUndefined();
  });

  it('leaves no temporary file behind and replaces an older snapshot whole', async () => {
    await writeSnapshot(file, { seq: 1, data: sample('A much longer category name than the next one') });
    await writeSnapshot(file, { seq: 2, data: sample('B') });
    expect(readdirSync(dir)).toEqual(['snapshot.json']);
    expect(readSnapshot(file)).toEqual({ seq: 2, data: sample('B') });
  });

  it('ignores a stale temporary file left by a crash in the middle of writing', async () => {
    await writeSnapshot(file, { seq: 5, data: sample() });
    writeFileSync(`${file}.tmp`, '{"format":"petstore-snapshot","version":1,"se');
    expect(readSnapshot(file)).toEqual({ seq: 5, data: sample() });
    await writeSnapshot(file, { seq: 6, data: sample('C') });
    expect(existsSync(`${file}.tmp`)).toBe(false);
    expect(readSnapshot(file)!.seq).toBe(6);
  });
});

describe('a damaged snapshot is CorruptFileError naming snapshot.json, and the file is left as it was', () => {
  beforeEach(async () => {
    await writeSnapshot(file, { seq: 9, data: sample() });
  });

  it('when one byte of the body changed (same length, SHA-256 mismatch)', () => {
    const bytes = readFileSync(file);
    const at = bytes.indexOf('Tom');
    bytes.write('X', at, 'latin1');
    writeFileSync(file, bytes);
    expectCorrupt(file);
  });

  it('when the body is shorter than the header says', () => {
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, bytes.length - 10));
    expectCorrupt(file);
  });

  it('when the body is longer than the header says', () => {
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from(' ')]));
    expectCorrupt(file);
  });

  it('when the header line is garbage bytes', () => {
    const bytes = readFileSync(file);
    const nl = bytes.indexOf(0x0a);
    writeFileSync(file, Buffer.concat([Buffer.from([0x00, 0xff, 0x13, 0x37, 0x7b]), bytes.subarray(nl)]));
    expectCorrupt(file);
  });

  it('when the header is valid JSON of another shape ({} or a foreign format)', () => {
    const bytes = readFileSync(file);
    const body = bytes.subarray(bytes.indexOf(0x0a));
    writeFileSync(file, Buffer.concat([Buffer.from('{}'), body]));
    expectCorrupt(file);
    writeFileSync(file, Buffer.concat([Buffer.from('{"format":"something-else","version":1}'), body]));
    expectCorrupt(file);
  });

  it('when the header line is the JSON literal null', () => {
    const bytes = readFileSync(file);
    writeFileSync(file, Buffer.concat([Buffer.from('null'), bytes.subarray(bytes.indexOf(0x0a))]));
    expectCorrupt(file);
  });

  it.each([
    ['an event line that is not JSON', (lines: string[]) => [lines[0], '{"sequence":4,"type":']],
    ['event lines whose sequences are not consecutive', (lines: string[]) => [lines[0], lines[1]!.replace('"sequence":4', '"sequence":5')]],
    ['an event line without its newline', (lines: string[]) => [lines[0], `${lines[1]}}`]],
  ] as const)('when the body has %s (a valid SHA-256 over it)', async (_what, damage) => {
    await writeSnapshot(file, { seq: 2, data: sample() });
    const bytes = readFileSync(file);
    const nl = bytes.indexOf(0x0a);
    const [json, ...lines] = bytes.subarray(nl + 1).toString('utf8').split('\n');
    const damaged = damage(lines.slice(0, 2));
    const body = Buffer.from(`${json}\n${damaged[0]}\n${damaged[1]}${_what.includes('newline') ? '' : '\n'}`, 'utf8');
    const header = JSON.stringify({ format: 'petstore-snapshot', version: 1, seq: 2, length: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    writeFileSync(file, Buffer.concat([Buffer.from(`${header.padEnd(255, ' ')}\n`), body]));
    expectCorrupt(file);
  });

  it('when the file is empty or has no header line at all', () => {
    writeFileSync(file, '');
    expectCorrupt(file);
    writeFileSync(file, 'no newline anywhere');
    expectCorrupt(file);
  });
});

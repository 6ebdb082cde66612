/**
 * The event log, every event kept as a line of text in byte chunks, a snapshot's lines (RawEvents)
 * taken as they are before the events appended since: every read (list with type and owner filters, get, firstSince, values, size, window)
 * answers as a plain array of the same events does, before and after retention drops part or all
 * of the lines; events already held are not appended again; a snapshot gets the lines back as
 * they were. Names that look like the lines' leading fields, newlines and non-ASCII text in the
 * data do not confuse the reading of a line's type and owner.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventRecord, type EventType } from '../../service/events.js';
import { EventLog, rawEventLine, rawEventRecords, runsOf, splitRawEvents } from './event-log.js';

const NAMES = ['Rex', 'Tom 🐈‍⬛', 'x","type":"order.placed","ownerKeyId":7,"data":{', 'line\nbreak \u2028 "quoted" \\', 'עברית'];

function events(n: number): EventRecord[] {
  let seed = 7;
  const rnd = (k: number) => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) >>> 8) % k;
  return Array.from({ length: n }, (_, i) => {
    const type = EVENT_TYPES[rnd(EVENT_TYPES.length)]!;
    const e: EventRecord = {
      // Sequences skip twice (a journal batch that failed leaves its sequences unused).
      sequence: i + 1 + (i >= 90 ? 3 : 0) + (i >= 200 ? 5 : 0),
      type,
      createdAt: new Date(Date.UTC(2026, 10, 26, 12, 0, Math.floor(i / 3))).toISOString(),
      data: { object: { id: i + 1, name: NAMES[i % NAMES.length]! }, ...(i % 4 ? { previous: { name: 'old' } } : {}) },
    };
    if (type.startsWith('order.') || i % 7 === 0) e.ownerKeyId = rnd(4);
    return e;
  });
}

const encode = (es: EventRecord[]) => new TextEncoder().encode(es.map(rawEventLine).join(''));
const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};

/** A log of `all`: the first `rawCount` as a snapshot's lines, the rest appended. */
function logOf(all: EventRecord[], rawCount: number): EventLog {
  const log = new EventLog();
  const lines = all.slice(0, rawCount);
  log.loadRaw(splitRawEvents(encode(lines), runsOf(lines.map((e) => e.sequence))));
  log.append(all.slice(rawCount));
  return log;
}

function expectSameAs(log: EventLog, kept: EventRecord[], latest: number): void {
  const ctx = `oldest ${kept[0]?.sequence}`;
  expect(log.values(), ctx).toEqual(kept);
  expect(log.size).toBe(kept.length);
  expect(log.window().latest).toBe(latest);
  if (kept.length) expect(log.window().oldest).toBeLessThanOrEqual(kept[0]!.sequence);
  for (const s of [0, 1, 40, 90, 91, 92, 93, 94, 119, 120, 121, 200, 210, 250, 251, 258, 259]) expect(log.get(s), `get ${s}, ${ctx}`).toEqual(kept.find((e) => e.sequence === s));
  const filters: [ReadonlySet<EventType> | undefined, number | undefined][] = [
    [undefined, undefined],
    [new Set(['order.placed', 'pet.created']), undefined],
    [undefined, 2],
    [new Set(['order.placed', 'order.completed', 'inventory.changed']), 1],
  ];
  for (const [types, ownerKeyId] of filters) {
    for (const after of [0, 30, 90, 92, 119, 120, 180, 211]) {
      for (const limit of [1, 7, 500]) {
        const want = kept.filter((e) => e.sequence > after && (!types || types.has(e.type)) && (ownerKeyId === undefined || e.ownerKeyId === undefined || e.ownerKeyId === ownerKeyId)).slice(0, limit);
        expect(log.list({ after, limit, types, ownerKeyId }), `list after ${after}, limit ${limit}, ${ctx}`).toEqual(want);
      }
    }
  }
  for (const t of ['2026-11-26T11:00:00.000Z', '2026-11-26T12:00:13.000Z', '2026-11-26T12:00:40.000Z', '2026-11-26T12:00:59.500Z', '2026-11-26T13:00:00.000Z']) {
    expect(log.firstSince(t), `firstSince ${t}, ${ctx}`).toBe(kept.find((e) => e.createdAt >= t)?.sequence);
  }
  const snapshot = log.snapshotItems();
  const fromSnapshot = rawEventRecords(splitRawEvents(concat(snapshot.lines), snapshot.runs));
  expect(fromSnapshot).toEqual(kept);
}

describe('the event log with a snapshot\'s events as lines', () => {
  const all = events(250);

  it('reads the lines back as the events they were, and refuses lines whose sequences are not what the runs say', () => {
    const runs = runsOf(all.map((e) => e.sequence));
    expect(runs).toEqual([[0, 1], [90, 94], [200, 209]]);
    expect(rawEventRecords(splitRawEvents(encode(all), runs))).toEqual(all);
    expect(splitRawEvents(new Uint8Array(0))).toBeUndefined();
    expect(() => splitRawEvents(encode(all))).toThrow(/do not have the sequences/);
    expect(() => splitRawEvents(encode([all[0]!, all[2]!]))).toThrow(/do not have the sequences/);
    expect(() => splitRawEvents(new TextEncoder().encode(rawEventLine(all[0]!).trimEnd()))).toThrow(/without its end/);
  });

  const latest = all.at(-1)!.sequence;

  it.each([0, 1, 120, 250])('answers every read as the plain list does, with %i of 250 as lines, as retention drops more and more', (rawCount) => {
    const log = logOf(all, rawCount);
    // A replayed journal entry whose events the snapshot already held: not appended twice.
    log.append(all.slice(Math.max(0, rawCount - 5), rawCount + 3));
    expectSameAs(log, all, latest);
    for (const oldest of [2, 60, 92, 120, 121, 200, 205, 258, 260]) {
      log.dropBefore(oldest);
      expectSameAs(log, all.filter((e) => e.sequence >= oldest), latest);
    }
    // After everything was dropped (up to 260, past the latest), the log starts again at 260.
    log.append(events(260).slice(250));
    expect(log.values().map((e) => e.sequence)).toEqual(Array.from({ length: 9 }, (_, i) => 260 + i));
  });

  it('spans many chunks (and a line longer than one), releases them as retention drops, and keeps a steady window', () => {
    const big = events(3_000).map((e, i) => (i === 1_500 ? { ...e, data: { object: { id: i + 1, name: 'long '.repeat(70_000) } } } : { ...e, data: { object: { id: i + 1, name: `${'n'.repeat(200)} ${i}` } } }));
    const log = logOf(big, 700);
    expect(log.values()).toEqual(big);
    expect(log.get(big[1_500]!.sequence)).toEqual(big[1_500]);
    const chunks = log.snapshotItems();
    expect(chunks.lines.length).toBeGreaterThan(3);
    expect(rawEventRecords(splitRawEvents(concat(chunks.lines), chunks.runs))).toEqual(big);
    log.dropBefore(2_000);
    expect(log.snapshotItems().lines.length).toBeLessThan(chunks.lines.length);
    expect(log.values()).toEqual(big.filter((e) => e.sequence >= 2_000));
    // Steady retention: one in, one out, 5,000 times, the arrays compacted as they fill.
    const more = events(8_000).slice(3_000);
    for (const e of more) {
      log.append([e]);
      log.dropBefore(e.sequence - 999);
    }
    expect(log.size).toBe(1_000);
    expect(log.values()).toEqual(more.slice(-1_000));
    expect(log.list({ after: 7_500, limit: 3 }).map((e) => e.sequence)).toEqual([7_501, 7_502, 7_503]);
    // A gap after them: the events on either side are found, the missing ones are not.
    const last = more.at(-1)!;
    log.append([{ ...last, sequence: last.sequence + 10 }]);
    expect(log.get(last.sequence + 10)?.sequence).toBe(last.sequence + 10);
    expect(log.get(last.sequence + 1)).toBeUndefined();
    expect(log.list({ after: last.sequence - 1, limit: 5 }).map((e) => e.sequence)).toEqual([last.sequence, last.sequence + 10]);
    const snap = log.snapshotItems();
    expect(rawEventRecords(splitRawEvents(concat(snap.lines), snap.runs)).map((e) => e.sequence)).toEqual(log.values().map((e) => e.sequence));
  });

  it('keeps a snapshot\'s window: dropped events below it stay dropped, and the latest counter may be above the lines', () => {
    const log = new EventLog();
    const lines = all.slice(99, 150);
    log.loadRaw(splitRawEvents(encode(lines), runsOf(lines.map((e) => e.sequence))));
    log.dropBefore(110);
    log.raiseLatest(165);
    log.append(all.slice(100, 170));
    expect(log.window()).toEqual({ oldest: 110, latest: all[169]!.sequence });
    expect(log.values()).toEqual(all.slice(100, 170).filter((e) => e.sequence >= 110));
  });
});

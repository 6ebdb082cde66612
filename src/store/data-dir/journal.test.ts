/**
 * The journal on its own (CONTRACT section 10): framing [u32 length][u32 CRC-32][JSON], reading
 * back, telling a torn last entry (dropped) from damage before the last (CorruptFileError naming
 * the file), reopening after a torn tail, and group commit keeping every caller's entry, in order,
 * on disk by the time its append resolves.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeFs } from './fs.js';
import { CorruptFileError, Journal, encodeEntry, type JournalEntry } from './journal.js';
import { readJournal } from '../../../test/support/data-dir-files.js';
import type { ChangeSet } from '../memory/memory-store.js';

let dir: string;
let file: string;
const opened: Journal[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-journal-'));
  file = join(dir, 'journal.log');
});

afterEach(async () => {
  for (const j of opened.splice(0)) await j.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

async function openJournal(validLength: number, lastSeq: number): Promise<Journal> {
  const fail = (what: string) => () => {
    throw new Error(`unexpected ${what}`);
  };
  const j = await Journal.open({ fs: nodeFs, file, onFatal: fail('fatal error'), onOutage: fail('outage') }, validLength, lastSeq);
  opened.push(j);
  return j;
}

const category = (id: number, name = `category ${id}`): ChangeSet => ({
  categories: [[id, { id, name }]],
  counters: { categories: id },
});

function flip(buf: Buffer, at: number, mask: number): void {
  buf.writeUInt8(buf.readUInt8(at) ^ mask, at);
}

const entry = (seq: number, name?: string): JournalEntry => ({ seq, changes: category(seq, name) });

/** Three whole, valid frames in one file; returns the byte offset of each frame. */
function writeThree(): number[] {
  const frames = [entry(1), entry(2), entry(3)].map(encodeEntry);
  writeFileSync(file, Buffer.concat(frames));
  const offsets: number[] = [];
  let off = 0;
  for (const f of frames) {
    offsets.push(off);
    off += f.length;
  }
  return offsets;
}

describe('framing', () => {
  it('frames an entry as [u32 big-endian length][u32 CRC-32 of the payload][UTF-8 JSON { seq, changes }]', () => {
    const e = entry(7, 'Dogs 🐕');
    const frame = encodeEntry(e);
    const payload = frame.subarray(8);
    expect(frame.readUInt32BE(0)).toBe(payload.length);
    expect(frame.readUInt32BE(4)).toBe(crc32(payload));
    expect(JSON.parse(payload.toString('utf8'))).toEqual({ seq: 7, changes: e.changes });
  });

  it('reads back every whole entry in order, with no torn tail', () => {
    writeThree();
    const r = readJournal(file);
    expect(r.torn).toBe(false);
    expect(r.validLength).toBe(readFileSync(file).length);
    expect(r.entries).toEqual([entry(1), entry(2), entry(3)]);
  });

  it('treats a missing journal as an empty one', () => {
    expect(readJournal(join(dir, 'nothing-here.log'))).toEqual({ entries: [], validLength: 0, torn: false });
  });

  it('keeps strings with emoji, astral-plane, right-to-left, combining and line-separator characters byte for byte', () => {
    const name = 'Hunde 🐕‍🦺 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠜎 مرحبا שלום e\u0301 n\u0303 a\u2028b\u2029c "q" \\ \t end';
    writeFileSync(file, encodeEntry(entry(1, name)));
    const [back] = readJournal(file).entries;
    const stored = (back!.changes.categories![0]![1] as { name: string }).name;
    expect(stored).toBe(name);
    expect(Buffer.from(stored, 'utf8').equals(Buffer.from(name, 'utf8'))).toBe(true);
  });
});

describe('a torn last entry (a crash in the middle of an append)', () => {
  const goodLength = () => Buffer.concat([entry(1), entry(2), entry(3)].map(encodeEntry)).length;

  it('drops a last entry of which only a few header bytes were written', () => {
    writeThree();
    appendFileSync(file, encodeEntry(entry(4)).subarray(0, 3));
    const r = readJournal(file);
    expect(r.torn).toBe(true);
    expect(r.validLength).toBe(goodLength());
    expect(r.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('drops a last entry whose payload was cut short', () => {
    writeThree();
    const frame = encodeEntry(entry(4));
    appendFileSync(file, frame.subarray(0, 8 + Math.floor((frame.length - 8) / 2)));
    const r = readJournal(file);
    expect(r.torn).toBe(true);
    expect(r.validLength).toBe(goodLength());
    expect(r.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('drops a whole last frame whose CRC does not match its payload', () => {
    writeThree();
    const frame = Buffer.from(encodeEntry(entry(4)));
    flip(frame, frame.length - 2, 0x01);
    appendFileSync(file, frame);
    const r = readJournal(file);
    expect(r.torn).toBe(true);
    expect(r.validLength).toBe(goodLength());
    expect(r.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('on reopening cuts the torn tail off and appends the next entry right after the good prefix', async () => {
    writeThree();
    const good = readFileSync(file);
    appendFileSync(file, encodeEntry(entry(4)).subarray(0, 13));
    const { validLength, entries } = readJournal(file);
    const j = await openJournal(validLength, entries.at(-1)!.seq);
    expect(j.lastSeq).toBe(3);
    await j.append(category(4, 'after the tear'));
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, good.length).equals(good)).toBe(true);
    expect(bytes.subarray(good.length).equals(encodeEntry(entry(4, 'after the tear')))).toBe(true);
    const again = readJournal(file);
    expect(again.torn).toBe(false);
    expect(again.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });
});

describe('damage in an entry that is not the last', () => {
  it('rejects a bad CRC in the first of three entries with CorruptFileError naming the journal file', () => {
    writeThree();
    const bytes = readFileSync(file);
    flip(bytes, 20, 0x20); // inside the first payload
    writeFileSync(file, bytes);
    let err: unknown;
    try {
      readJournal(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CorruptFileError);
    expect((err as CorruptFileError).file).toBe(file);
    expect((err as CorruptFileError).message).toContain(file);
  });

  it('rejects a damaged checksum field of the middle entry, and leaves the file as it was', () => {
    const offsets = writeThree();
    const bytes = readFileSync(file);
    flip(bytes, offsets[1]! + 5, 0xff); // the CRC field of entry 2
    writeFileSync(file, bytes);
    const before = readFileSync(file);
    expect(() => readJournal(file)).toThrow(CorruptFileError);
    expect(() => readJournal(file)).toThrow(/journal\.log/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});

describe('appending', () => {
  it('creates the journal when there is none and numbers entries after the last sequence number it was given', async () => {
    expect(existsSync(file)).toBe(false);
    const j = await openJournal(0, 41);
    await j.append(category(1));
    expect(j.lastSeq).toBe(42);
    expect(readJournal(file).entries).toEqual([{ seq: 42, changes: category(1) }]);
  });

  it('puts every one of 50 concurrent appends on disk, in append order, before it resolves', async () => {
    const j = await openJournal(0, 0);
    const seen: number[][] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        j.append(category(i + 1)).then(() => {
          // At the moment this append resolves, its entry must already be in the file.
          seen.push(readJournal(file).entries.map((e) => e.seq));
          expect(seen.at(-1)).toContain(i + 1);
        }),
      ),
    );
    const r = readJournal(file);
    expect(r.torn).toBe(false);
    expect(r.entries.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(r.entries.map((e) => e.changes.categories![0]![0])).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(seen).toHaveLength(50);
  });

  it('empties the file after a snapshot and keeps numbering after it', async () => {
    const j = await openJournal(0, 0);
    await j.append(category(1));
    await j.append(category(2));
    expect(await j.beginSnapshot()).toBe(2);
    await j.empty();
    expect(readFileSync(file).length).toBe(0);
    await j.append(category(3));
    expect(readJournal(file).entries.map((e) => e.seq)).toEqual([3]);
  });

  it('keeps the entries made durable while a snapshot was written, and only those, when it empties the file', async () => {
    const j = await openJournal(0, 0);
    for (let i = 1; i <= 3; i++) await j.append(category(i));
    expect(await j.beginSnapshot()).toBe(3);
    await j.append(category(4));
    const late = j.append(category(5));
    const emptied = j.empty();
    const later = j.append(category(6));
    await Promise.all([late, emptied, later]);
    expect(readJournal(file).entries.map((e) => e.seq)).toEqual([4, 5, 6]);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    await j.append(category(7));
    expect(readJournal(file).entries.map((e) => e.seq)).toEqual([4, 5, 6, 7]);
    expect(j.size).toBe(readFileSync(file).length);
  });
});

/**
 * kill -9 in a loop (CONTRACT section 10), 20 cycles on one data directory with concurrent
 * writers and readers (test/crash/kill-loop.ts): nothing acknowledged is lost, nothing diverges,
 * nothing unexpected appears, and every record a reader was shown survives. Every start after a
 * kill also takes over the stale lock file. `npm run soak:crash` runs 200 cycles.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runKillLoop } from './kill-loop.js';

const dir = mkdtempSync(join(tmpdir(), 'petstore-killloop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kill -9 in a loop with concurrent writers and readers', () => {
  it('loses nothing acknowledged over 20 cycles: lost = unexpected = divergent = unseen = 0', { timeout: 240_000 }, async () => {
    const r = await runKillLoop({ dataDir: dir, cycles: 20, seed: 20261123 });
    console.log(
      `[kill-loop] cycles=${r.cycles} acknowledged=${r.acknowledged} deletes=${r.deletesAcknowledged} seenByReaders=${r.readsSeen} cutOff=${r.cutOff} ` +
        `lost=${r.lost.length} divergent=${r.divergent.length} unexpected=${r.unexpected.length} unseen=${r.unseen.length} ` +
        `start p50=${[...r.startMs].sort((a, b) => a - b)[Math.floor(r.startMs.length / 2)]} ms`,
    );
    expect(r.cycles).toBe(20);
    expect(r.lost).toEqual([]);
    expect(r.divergent).toEqual([]);
    expect(r.unexpected).toEqual([]);
    expect(r.unseen).toEqual([]);
    expect(r.acknowledged).toBeGreaterThan(20 * 20);
    expect(r.readsSeen).toBeGreaterThan(100);
  });
});

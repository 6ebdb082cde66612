/**
 * Snapshots never stop the service (CONTRACT section 10): with 1,000,000 pets, a snapshot taken
 * while four writers keep writing holds the event loop for at most 50 ms at a time, 99% of writes
 * finish within 50 ms, writes go on throughout, and a restart on what a kill -9 would leave right after
 * it (the snapshot, written while writes went on, plus the journal since its start) finds every
 * pet. `npm run bench:snapshot` prints the same figures.
 *
 * A stall can also come from the operating system giving the core to another process; on a busy
 * 2-core machine the measurement is taken once more before it counts as a failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { measureSnapshotStall } from './stall.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const temp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};

describe('a snapshot of 1,000,000 pets', () => {
  it('holds the event loop at most 50 ms at a time, finishes 99% of writes within 50 ms, and writes go on', { timeout: 120_000, retry: 1 }, async () => {
    const f = await measureSnapshotStall(temp('petstore-stall-'), 1_000_000, temp('petstore-stall-image-'));
    console.log(`[snapshot-stall] ${JSON.stringify(f)}`);
    expect(f.during.maxStallMs).toBeLessThanOrEqual(50);
    // A single write's worst case also carries the scheduler's noise on a shared machine; the
    // stall above is the event loop's own, and the p99 is what writers see.
    expect(f.during.writeP99Ms).toBeLessThanOrEqual(50);
    expect(f.during.writes).toBeGreaterThan(100);
    expect(f.petsAfterRestart).toBe(1_000_000 + f.baseline.writes + f.during.writes);
  });
});

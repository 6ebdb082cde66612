/**
 * `npm run soak:crash`: the kill -9 loop of test/crash/kill-loop.ts for 200 cycles (SOAK_CYCLES
 * to change it, 1-2000) on a fresh temporary data directory. Prints one line per cycle and the
 * totals; exits 1 if anything was lost, divergent, unexpected or unseen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runKillLoop } from './kill-loop.js';

const cycles = Number(process.env.SOAK_CYCLES ?? 200);
if (!Number.isInteger(cycles) || cycles < 1 || cycles > 2000) throw new Error(`SOAK_CYCLES must be an integer from 1 to 2000, got ${process.env.SOAK_CYCLES}`);
const seed = Number(process.env.SOAK_SEED ?? 20261123);
const dir = mkdtempSync(join(tmpdir(), 'petstore-soak-'));
const started = Date.now();
try {
  const r = await runKillLoop({ dataDir: dir, cycles, seed, log: (line) => console.log(line) });
  const sorted = [...r.startMs].sort((a, b) => a - b);
  console.log(
    [
      `soak:crash done in ${Math.round((Date.now() - started) / 1000)} s (seed ${seed})`,
      `  cycles (kill -9):       ${r.cycles}`,
      `  writes acknowledged:    ${r.acknowledged} (+ ${r.deletesAcknowledged} deletes)`,
      `  records seen by reads:  ${r.readsSeen}`,
      `  requests cut off:       ${r.cutOff}`,
      `  lost:                   ${r.lost.length}`,
      `  divergent:              ${r.divergent.length}`,
      `  unexpected:             ${r.unexpected.length}`,
      `  seen, then gone:        ${r.unseen.length}`,
      `  start-up p50/max:       ${sorted[Math.floor(sorted.length / 2)]} / ${sorted.at(-1)} ms`,
    ].join('\n'),
  );
  for (const line of [...r.lost, ...r.divergent, ...r.unexpected, ...r.unseen].slice(0, 50)) console.log(`  ! ${line}`);
  process.exitCode = r.lost.length + r.divergent.length + r.unexpected.length + r.unseen.length === 0 && r.cycles === cycles ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}

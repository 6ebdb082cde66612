/**
 * Rows measured on two checkouts' servers in alternating turns (A, B, B, A, ...), so that the
 * shared machine's drift weighs on both alike: A is another checkout (a commit unpacked with
 * `git archive <commit> | tar -x -C <dir>`, this node_modules linked in), B this one. Each turn
 * starts a fresh server on a fresh data directory, pinned like every server of the bench, makes
 * the bench fixture and runs every row once. Used by bench/ab.ts and by `npm run bench` (the
 * durable write rows against the commit before events, bench/run.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { measure, type LoadOptions } from './measure.js';
import { stopChild } from './processes.js';
import type { Scenario } from './scenarios.js';
import { newAdminKey, ROOT, startServer, tempDir } from './servers.js';
import { createFixture } from './setup.js';

export type Side = 'A' | 'B';

export interface Alternated {
  /** Per side and row name, each turn's server CPU µs per request and req/s. */
  cpu: Record<Side, Record<string, number[]>>;
  rps: Record<Side, Record<string, number[]>>;
  unexpected: number;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function alternate(o: { other: string; rows: Scenario[]; turns: number; load: LoadOptions; pin: boolean; log?: (line: string) => void }): Promise<Alternated> {
  const log = o.log ?? console.log;
  const out: Alternated = { cpu: { A: {}, B: {} }, rps: { A: {}, B: {} }, unexpected: 0 };
  for (let turn = 1; turn <= o.turns; turn++) {
    for (const side of turn % 2 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const adminKey = newAdminKey();
      const server = await startServer({ name: `server ${side}`, dataDir: tempDir('petstore-ab-'), adminKey, pin: o.pin, root: side === 'A' ? o.other : undefined });
      try {
        const fx = await createFixture(server.url, adminKey);
        for (const s of o.rows) {
          await s.preflight?.(server.url, fx);
          const m = await measure(server, { request: s.request(fx), verifyBody: s.verifyBody }, o.load);
          if (m.unexpected) log(`  ${side} ${s.name}: ${m.unexpected} unexpected responses [${m.statusCodes}]`);
          out.unexpected += m.unexpected;
          (out.cpu[side][s.name] ??= []).push(m.cpuUsPerReq ?? NaN);
          (out.rps[side][s.name] ??= []).push(m.reqPerSec);
          log(`  turn ${turn} ${side} ${s.name}: ${Math.round(m.reqPerSec)} req/s, ${m.cpuUsPerReq?.toFixed(1)} µs CPU/req`);
        }
      } finally {
        await stopChild(server);
      }
    }
  }
  return out;
}

/** `commit` of this repository unpacked into a temporary directory with this node_modules linked in; throws when git cannot. */
export function checkoutOf(commit: string): string {
  const dir = tempDir(`petstore-${commit}-`);
  const r = spawnSync('sh', ['-c', `git archive "$1" | tar -x -C "$2"`, 'sh', commit, dir], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0 || !existsSync(join(dir, 'bin', 'start.mjs'))) throw new Error(`git archive ${commit} failed: ${(r.stderr || r.error?.message || '').trim()}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

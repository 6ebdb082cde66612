/**
 * Failpoints in the real process (CONTRACT section 10): with `PETSTORE_FAILPOINT=<step>[:n]` the
 * server kills itself (SIGKILL) the n-th time it reaches that step of the persistence path, under
 * a concurrent write load with a snapshot every 10 writes. A restart without the failpoint must
 * hold every acknowledged write with identical fields, nothing nobody asked for, and hand out
 * fresh ids. The steps: after a journal batch is written but not fdatasynced; after the fdatasync,
 * before anything is acknowledged; after the temporary snapshot is written; after its rename,
 * before the directory fsync; after the journal is emptied; and the last three during the final
 * snapshot of a SIGTERM shutdown.
 *
 * With `:<ERRNO>` the step fails with that error instead: EIO after a journal write makes the
 * process exit non-zero without answering the batch; ENOSPC there is an outage the process rides
 * out (503 with Retry-After: 1 for the batch, then writes again by themselves).
 */
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { LISTENING, ServerProcess, exitWithin } from '../support/process.js';
import { CheckedClient } from './checked-client.js';
import { temporaryDirs } from '../support/files.js';

const ADMIN_KEY = 'psk_enterprise_FailpointAdminKey0123456789abcdefghijKLM';
const tempDir = temporaryDirs('petstore-failpoint-');
const processes: ServerProcess[] = [];

afterAll(() => {
  for (const p of processes) p.kill();
});

function start(dir: string, env: Record<string, string> = {}): ServerProcess {
  const p = new ServerProcess({ PETSTORE_DATA_DIR: dir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false', PETSTORE_SNAPSHOT_EVERY: '10', ...env }, 40_000);
  processes.push(p);
  return p;
}

interface Load {
  acknowledged: Record<string, unknown>[];
  attempted: Set<string>;
  problems: string[];
}

/** Four writers creating categories until the server dies (or 600 requests, or 20 s). */
async function writeUntilDeath(client: CheckedClient, tag: string, load: Load, server: ServerProcess): Promise<void> {
  let sent = 0;
  const deadline = Date.now() + 20_000;
  const writer = async (w: number) => {
    while (server.running && sent < 600 && Date.now() < deadline) {
      const name = `${tag} ${w}-${sent++}`;
      load.attempted.add(name);
      const res = await client.call('POST', '/categories', { name, description: 'under a failpoint' });
      if (!res) return;
      if (res.status === 201) load.acknowledged.push(res.body);
      else load.problems.push(`POST /categories answered ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  await Promise.all([0, 1, 2, 3].map(writer));
}

/** Restarts without a failpoint and checks everything acknowledged is there, and nothing else. */
async function expectRecovered(dir: string, load: Load): Promise<void> {
  const server = start(dir);
  try {
    const client = new CheckedClient(`http://127.0.0.1:${await server.port()}`, ADMIN_KEY, load.problems);
    const stored = (await client.listAll('/categories'))!;
    expect(stored).toBeDefined();
    const byId = new Map(stored.map((c) => [c.id, c]));
    expect(load.acknowledged.filter((c) => !byId.has(c.id)), 'acknowledged writes lost').toEqual([]);
    for (const c of load.acknowledged) expect(byId.get(c.id)).toEqual(c);
    expect(stored.filter((c) => !load.attempted.has(String(c.name))), 'records nobody asked for').toEqual([]);
    const next = await client.call('POST', '/categories', { name: 'after the restart' });
    expect(next?.status).toBe(201);
    expect(next!.body.id).toBeGreaterThan(Math.max(0, ...stored.map((c) => Number(c.id))));
    expect(load.problems).toEqual([]);
  } finally {
    server.kill();
  }
}

describe.concurrent('a server that kills itself at a failpoint loses nothing acknowledged', { timeout: 90_000 }, () => {
  const underLoad: [string, string][] = [
    ['after a journal batch is written, before its fdatasync', 'journal-appended:40'],
    ['after the fdatasync, before anything of the batch is acknowledged', 'journal-synced:40'],
    ['after the temporary snapshot is written and fsynced', 'snapshot-written:2'],
    ['after the snapshot rename, before the directory fsync', 'snapshot-renamed:2'],
    ['after the journal is emptied', 'journal-emptied:2'],
  ];

  it.each(underLoad)('%s (PETSTORE_FAILPOINT=%s)', async (_what, failpoint) => {
    const dir = tempDir();
    const load: Load = { acknowledged: [], attempted: new Set(), problems: [] };
    const server = start(dir, { PETSTORE_FAILPOINT: failpoint });
    const client = new CheckedClient(`http://127.0.0.1:${await server.port()}`, ADMIN_KEY, load.problems);
    await writeUntilDeath(client, failpoint, load, server);
    const exit = await exitWithin(server, 10_000);
    expect(exit.signal, `the server did not reach ${failpoint}: ${server.stderr.slice(-400)}`).toBe('SIGKILL');
    expect(load.acknowledged.length).toBeGreaterThan(0);
    await expectRecovered(dir, load);
  });

  it.each([['snapshot-written'], ['snapshot-renamed'], ['journal-emptied']])(
    'during the final snapshot of a SIGTERM shutdown (PETSTORE_FAILPOINT=%s)',
    async (failpoint) => {
      const dir = tempDir();
      const load: Load = { acknowledged: [], attempted: new Set(), problems: [] };
      // No background snapshot: the first snapshot is the shutdown's.
      const server = start(dir, { PETSTORE_FAILPOINT: failpoint, PETSTORE_SNAPSHOT_EVERY: '1000000' });
      const client = new CheckedClient(`http://127.0.0.1:${await server.port()}`, ADMIN_KEY, load.problems);
      for (let i = 0; i < 25; i++) {
        const name = `${failpoint} ${i}`;
        load.attempted.add(name);
        const res = await client.call('POST', '/categories', { name });
        expect(res?.status).toBe(201);
        load.acknowledged.push(res!.body);
      }
      server.kill('SIGTERM');
      const exit = await exitWithin(server, 10_000);
      expect(exit.signal).toBe('SIGKILL');
      expect(server.lines().filter((l) => LISTENING.test(l))).toHaveLength(1);
      expect(readdirSync(dir)).toContain('petstore.lock'); // killed: the stale lock stays, and is taken over
      await expectRecovered(dir, load);
    },
  );
});

describe.concurrent('a journal batch that fails in the real process', { timeout: 90_000 }, () => {
  it('with EIO (PETSTORE_FAILPOINT=journal-appended:30:EIO): exits non-zero at once, answers nothing of the batch, loses nothing acknowledged', async () => {
    const dir = tempDir();
    const load: Load = { acknowledged: [], attempted: new Set(), problems: [] };
    const server = start(dir, { PETSTORE_FAILPOINT: 'journal-appended:30:EIO' });
    const client = new CheckedClient(`http://127.0.0.1:${await server.port()}`, ADMIN_KEY, load.problems);
    await writeUntilDeath(client, 'eio', load, server);
    const exit = await exitWithin(server, 10_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(server.stderr).toContain('stopping on a storage failure');
    expect(server.stderr).toContain('EIO');
    expect(load.problems).toEqual([]); // no 503, no 500: the failed batch got no answer at all
    expect(load.acknowledged.length).toBeGreaterThan(0);
    await expectRecovered(dir, load);
  });

  it('with ENOSPC (PETSTORE_FAILPOINT=journal-appended:30:ENOSPC): 503 with Retry-After: 1 for the batch, then writes again by itself; nothing refused comes back', async () => {
    const dir = tempDir();
    const problems: string[] = [];
    const server = start(dir, { PETSTORE_FAILPOINT: 'journal-appended:30:ENOSPC' });
    const client = new CheckedClient(`http://127.0.0.1:${await server.port()}`, ADMIN_KEY, problems);
    const acknowledged: Record<string, unknown>[] = [];
    const refused: string[] = [];
    const attempted = new Set<string>();
    let sent = 0;
    /** Writes acknowledged after the first 503: the outage ended by itself. */
    let resumed = 0;
    const deadline = Date.now() + 40_000;
    const writer = async (w: number) => {
      while (sent < 2_000 && Date.now() < deadline && (refused.length === 0 || resumed < 50)) {
        const name = `enospc ${w}-${sent++}`;
        attempted.add(name);
        const res = await client.call('POST', '/categories', { name });
        if (res?.status === 201) {
          acknowledged.push(res.body);
          if (refused.length > 0) resumed++;
        } else if (res?.status === 503) {
          refused.push(name);
          expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
          await new Promise((r) => setTimeout(r, 100));
        } else problems.push(`POST answered ${res?.status}`);
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    expect(refused.length).toBeGreaterThan(0);
    expect(resumed).toBeGreaterThanOrEqual(50); // writes came back by themselves
    expect(server.running).toBe(true);
    expect(server.stderr.split('\n').filter((l) => l.includes('persistence outage'))).toHaveLength(2);
    server.kill('SIGKILL');
    await exitWithin(server, 5_000);

    const again = start(dir);
    const c2 = new CheckedClient(`http://127.0.0.1:${await again.port()}`, ADMIN_KEY, problems);
    const stored = (await c2.listAll('/categories'))!;
    const names = new Set(stored.map((c) => c.name));
    expect(acknowledged.filter((c) => !names.has(c.name))).toEqual([]);
    expect(refused.filter((n) => names.has(n)), 'writes answered 503 came back').toEqual([]);
    expect(problems).toEqual([]);
    again.kill();
  });
});

/** Byte-level snapshots of a data directory, to prove that nothing in it changed, and temporary directories. */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';

export function filesOf(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).sort().map((n) => [n, readFileSync(join(dir, n))]));
}

export function expectFilesUnchanged(dir: string, before: Map<string, Buffer>): void {
  const after = filesOf(dir);
  expect([...after.keys()]).toEqual([...before.keys()]);
  for (const [name, bytes] of before) expect(after.get(name)!.equals(bytes), `${name} changed`).toBe(true);
}

/**
 * Temporary directories for one test file: each call of the function returned makes one (named
 * `prefix` and a random suffix, under the system's temporary directory); all are removed after
 * the file's tests. Called at the top of a file, before the `afterAll` that stops what uses them:
 * vitest runs `afterAll` hooks last registered first, so they are removed after it.
 */
export function temporaryDirs(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    made.push(d);
    return d;
  };
}

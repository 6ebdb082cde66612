/** Byte-level snapshots of a data directory, to prove that nothing in it changed. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

export function filesOf(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).sort().map((n) => [n, readFileSync(join(dir, n))]));
}

export function expectFilesUnchanged(dir: string, before: Map<string, Buffer>): void {
  const after = filesOf(dir);
  expect([...after.keys()]).toEqual([...before.keys()]);
  for (const [name, bytes] of before) expect(after.get(name)!.equals(bytes), `${name} changed`).toBe(true);
}

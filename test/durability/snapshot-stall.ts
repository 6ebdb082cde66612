/**
 * `npm run bench:snapshot`: the snapshot stall measurement of stall.ts at 1,000,000 pets
 * (STALL_PETS to change it), printed as JSON.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureSnapshotStall } from './stall.js';

const pets = Number(process.env.STALL_PETS ?? 1_000_000);
if (!Number.isInteger(pets) || pets < 1 || pets > 5_000_000) throw new Error(`STALL_PETS must be an integer from 1 to 5,000,000, got ${process.env.STALL_PETS}`);
const dir = mkdtempSync(join(tmpdir(), 'petstore-stall-'));
const image = mkdtempSync(join(tmpdir(), 'petstore-stall-image-'));
try {
  console.log(JSON.stringify(await measureSnapshotStall(dir, pets, image), null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
  rmSync(image, { recursive: true, force: true });
}

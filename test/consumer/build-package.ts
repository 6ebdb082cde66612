/** Global setup of the behaviour:package project: builds dist/ (scripts/build-package.mjs) once, before any file runs. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const built = spawnSync(process.execPath, ['scripts/build-package.mjs'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  if (built.status !== 0) throw new Error(`scripts/build-package.mjs failed (${built.signal ?? `exit ${built.status}`}):\n${built.stdout}\n${built.stderr}`);
}

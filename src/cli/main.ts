/**
 * `petstore <command>`: the command line for a stopped data directory (CONTRACT section 10).
 * Exits 0 on success; 1 with a message naming the file or directory on failure; 2 on bad usage.
 */
import { CorruptFileError } from '../store/data-dir/journal.js';
import { DirectoryLockedError } from '../store/data-dir/lock.js';
import { USAGE, UsageError, parseArgs, type Args } from './args.js';
import { CliError, heldWarning } from './data-dir.js';
import { exportData } from './export.js';
import { importData } from './import.js';
import { snapshot } from './snapshot.js';
import { verify } from './verify.js';

const say = (line: string) => process.stderr.write(`${line}\n`);

async function run(args: Args): Promise<void> {
  if (args.command === 'verify' || args.command === 'export') {
    const warning = heldWarning(args.dataDir);
    if (warning) say(warning);
  }
  switch (args.command) {
    case 'verify':
      return verify(args.dataDir, (line) => process.stdout.write(`${line}\n`));
    case 'snapshot':
      return snapshot(args.dataDir, (line) => process.stdout.write(`${line}\n`));
    case 'export': {
      const n = await exportData(args.dataDir, args.out, process.stdout);
      if (args.out) say(`exported ${n} records to ${args.out}`);
      return;
    }
    case 'import':
      return importData(args.dataDir, args.file!, (line) => process.stdout.write(`${line}\n`));
  }
}

let args: Args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  say(`petstore: ${err.message}\n${USAGE}`);
  process.exit(2);
}
try {
  await run(args);
} catch (err) {
  const known = err instanceof CorruptFileError || err instanceof DirectoryLockedError || err instanceof CliError;
  say(`petstore ${args.command}: ${known ? (err as Error).message : `failed: ${err instanceof Error ? err.message : String(err)}`}`);
  process.exitCode = 1;
}

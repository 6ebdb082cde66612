/**
 * The command line's arguments: `petstore <command> [FILE] [--data-dir DIR] [--out FILE]`
 * (also `--data-dir=DIR`). The data directory defaults to PETSTORE_DATA_DIR, then ./data.
 */
export const COMMANDS = ['verify', 'snapshot', 'export', 'import'] as const;
export type Command = (typeof COMMANDS)[number];

export interface Args {
  command: Command;
  dataDir: string;
  out?: string;
  file?: string;
}

export class UsageError extends Error {}

export const USAGE = `usage: petstore <command> [--data-dir DIR]

  verify               check every checksum and that the journal replays; print the record counts
  snapshot             write a fresh snapshot and empty the journal
  export [--out FILE]  every record as JSON Lines (standard output by default)
  import FILE          load an export into an empty data directory

Each works on a stopped data directory: --data-dir, else PETSTORE_DATA_DIR, else ./data.
Writing commands (snapshot, import) refuse a directory a server holds.`;

export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Args {
  const [command, ...rest] = argv;
  if (!COMMANDS.includes(command as Command)) throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  const options = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const m = /^--(data-dir|out)(?:=(.*))?$/.exec(arg);
    if (m) {
      const value = m[2] ?? rest[++i];
      if (value === undefined || value === '') throw new UsageError(`--${m[1]} needs a value`);
      options.set(m[1]!, value);
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option "${arg}"`);
    else positional.push(arg);
  }
  const args: Args = { command: command as Command, dataDir: options.get('data-dir') ?? (env.PETSTORE_DATA_DIR || './data') };
  if (args.dataDir === ':memory:') throw new UsageError('the :memory: store has no data directory');
  if (options.has('out')) {
    if (command !== 'export') throw new UsageError('--out belongs to export');
    args.out = options.get('out');
  }
  if (command === 'import') {
    if (positional.length !== 1) throw new UsageError('import needs exactly one FILE');
    args.file = positional[0];
  } else if (positional.length) throw new UsageError(`unexpected argument "${positional[0]}"`);
  return args;
}

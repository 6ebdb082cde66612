/**
 * The bench's output: one row per target of issue 9's table (what was measured, the target, PASS
 * or FAIL, the raw figures), printed as a Markdown table and appended to bench/RESULTS.md with
 * the command, the date, Node, the machine and how the processes were pinned.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface Row {
  name: string;
  /** The figure the target is about, e.g. "0.312" or "6.1 ms". */
  figure: string;
  target: string;
  pass: boolean;
  /** The raw figures behind it: req/s, latency, CPU per request, ... */
  detail: string;
  /** Responses that were not what the row expects (any makes the bench exit non-zero). */
  unexpected: number;
}

export function table(rows: Row[]): string {
  const lines = rows.map((r) => `| ${r.name} | ${r.figure} | ${r.target} | ${r.pass ? 'PASS' : '**FAIL**'} | ${r.detail}${r.unexpected ? `; **${r.unexpected} unexpected responses**` : ''} |`);
  return ['| row | measured | target | result | figures |', '|---|---:|---:|---|---|', ...lines].join('\n');
}

export function machine(): string {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    const models = [...readFileSync('/proc/cpuinfo', 'utf8').matchAll(/^model name\s*:\s*(.+)$/gm)].map((m) => m[1]!.trim());
    if (models.length) cpuModel = [...new Set(models)].join(' / ');
  } catch {
    /* not Linux: keep os.cpus() */
  }
  return `nproc ${os.availableParallelism()}, ${cpuModel}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()} ${os.arch()}`;
}

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export interface RunInfo {
  command: string;
  started: Date;
  machine: string;
  method: string[];
  rows: Row[];
  notes: string[];
}

export function appendResults(file: string, run: RunInfo): void {
  const passed = run.rows.filter((r) => r.pass).length;
  appendFileSync(
    file,
    [
      '',
      `### ${run.started.toISOString()}: \`${run.command}\`, ${passed} of ${run.rows.length} PASS`,
      '',
      `- node ${process.version}; machine: ${run.machine}; load average at the end ${loadAverage()}`,
      ...run.method.map((m) => `- ${m}`),
      ...run.notes.map((n) => `- ${n}`),
      '',
      table(run.rows),
      '',
    ].join('\n'),
  );
}

export const ms = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(1));
export const int = (n: number) => Math.round(n).toLocaleString('en-US');
export const mib = (bytes: number | undefined) => (bytes === undefined ? '-' : `${(bytes / 2 ** 20).toFixed(0)} MB`);

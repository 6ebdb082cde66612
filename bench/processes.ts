/**
 * Child processes of the bench: start one (pinned to a core with `taskset` when asked), wait for
 * its "listening on http://127.0.0.1:<port>" line, read its CPU time and RSS, and stop every one
 * of them at the end, whatever happened.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:(\d+))/;
const TAIL = 8 * 1024;

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** The last few KiB of its standard error, for failure messages. */
  stderrTail(): string;
  /** CPU time (user + system) it has used so far, in ms; undefined where /proc is missing. */
  cpuMs(): number | undefined;
  /** Resident set size now, in bytes (VmRSS); undefined where /proc is missing. */
  rssBytes(): number | undefined;
  /** From spawn to its listening line, ms. */
  startMs: number;
  exited(): boolean;
  /** Every line it writes to standard output after the listening line goes to `fn`. */
  onLine(fn: (line: string) => void): void;
}

const children = new Set<ChildProcess>();

export interface StartOptions {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs?: number;
  /** Run on this CPU only (`taskset -c`), when pinning is possible (see `pinning`). */
  cpu?: number;
}

/** Whether children and the bench can be pinned to separate cores: 2+ CPUs and a working taskset. */
export function pinning(): { ok: boolean; why: string } {
  if (os.availableParallelism() < 2) return { ok: false, why: `only ${os.availableParallelism()} CPU` };
  const r = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore', timeout: 5_000 });
  return r.status === 0 ? { ok: true, why: 'taskset' } : { ok: false, why: 'taskset is missing or refused' };
}

/** Pins this process, every thread of it, to `cpu` (the load generator's core). */
export function pinSelf(cpu: number): boolean {
  return spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore', timeout: 5_000 }).status === 0;
}

/** Spawns `node <args>` and resolves once it prints its listening line on loopback. */
export function startChild(opts: StartOptions): Promise<Child> {
  const t0 = performance.now();
  const [cmd, args] = opts.cpu === undefined ? [process.execPath, opts.args] : ['taskset', ['-c', String(opts.cpu), process.execPath, ...opts.args]];
  const proc = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  let stdoutBuf = '';
  let stderrBuf = '';
  let exited = false;
  proc.on('exit', () => {
    exited = true;
    children.delete(proc);
  });
  // Always drain both pipes: a child blocked on a full pipe would distort every figure.
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderrBuf = (stderrBuf + d).slice(-TAIL);
  });
  return new Promise<Child>((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${opts.name}: ${why}\n--- its stderr ---\n${stderrBuf}\n--- its stdout ---\n${stdoutBuf}`));
    };
    const timer = setTimeout(() => fail(`no listening line within ${opts.timeoutMs ?? 30_000} ms`), opts.timeoutMs ?? 30_000);
    proc.on('error', (err) => fail(`could not start: ${err.message}`));
    proc.on('exit', (code, signal) => fail(`exited before listening (code ${code}, signal ${signal})`));
    const lineFns: ((line: string) => void)[] = [];
    let pendingLine = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (settled) {
        const lines = (pendingLine + d).split('\n');
        pendingLine = lines.pop()!;
        for (const line of lines) for (const fn of lineFns) fn(line);
        return;
      }
      stdoutBuf = (stdoutBuf + d).slice(-TAIL);
      const m = LISTENING.exec(stdoutBuf);
      if (!m) return;
      const startMs = performance.now() - t0;
      settled = true;
      clearTimeout(timer);
      pendingLine = stdoutBuf.slice(stdoutBuf.indexOf('\n', m.index) + 1);
      resolve({
        name: opts.name,
        proc,
        pid: proc.pid!,
        url: m[1]!,
        startMs,
        stderrTail: () => stderrBuf,
        cpuMs: () => cpuMsOf(proc.pid!),
        rssBytes: () => rssOf(proc.pid!),
        exited: () => exited,
        onLine: (fn) => lineFns.push(fn),
      });
    });
  });
}

/** utime + stime of a process from /proc/<pid>/stat, in ms (Linux only). */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/** VmRSS of a process from /proc/<pid>/status, in bytes (Linux only). */
export function rssOf(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** SIGTERM one child and wait for it to exit (SIGKILL after graceMs). */
export function stopChild(c: Child, graceMs = 5_000): Promise<void> {
  return stopProc(c.proc, graceMs);
}

function stopProc(proc: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const kill = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** SIGTERM every child still running, then SIGKILL whichever has not exited after graceMs. */
export async function stopAll(graceMs = 5_000): Promise<void> {
  await Promise.all([...children].map((proc) => stopProc(proc, graceMs)));
}

/** Last resort on process exit (synchronous): SIGKILL whatever is left. */
export function killAllNow(): void {
  for (const proc of children) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
}

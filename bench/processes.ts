/**
 * Child processes of the bench: start one, wait for its "listening on http://127.0.0.1:<port>"
 * line, read its CPU time, and stop every one of them at the end, whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

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
  exited(): boolean;
}

const children = new Set<ChildProcess>();

export interface StartOptions {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs?: number;
}

/** Spawns `node <args>` and resolves once it prints its listening line on loopback. */
export function startChild(opts: StartOptions): Promise<Child> {
  const proc = spawn(process.execPath, opts.args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (settled) return;
      stdoutBuf = (stdoutBuf + d).slice(-TAIL);
      const m = LISTENING.exec(stdoutBuf);
      if (!m) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        name: opts.name,
        proc,
        pid: proc.pid!,
        url: m[1]!,
        stderrTail: () => stderrBuf,
        cpuMs: () => cpuMsOf(proc.pid!),
        exited: () => exited,
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

/** SIGTERM every child still running, then SIGKILL whichever has not exited after graceMs. */
export async function stopAll(graceMs = 5_000): Promise<void> {
  const running = [...children];
  await Promise.all(
    running.map(
      (proc) =>
        new Promise<void>((resolve) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
          const kill = setTimeout(() => {
            proc.kill('SIGKILL');
          }, graceMs);
          proc.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          proc.kill('SIGTERM');
        }),
    ),
  );
}

/** Last resort on process exit (synchronous): SIGKILL whatever is left. */
export function killAllNow(): void {
  for (const proc of children) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
}

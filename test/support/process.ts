/**
 * The real server as a child process (`node --import tsx src/main.ts`) on an ephemeral
 * loopback port: its output, its port, its exit. Every process gets a hard SIGKILL timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type Agent, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { contractProblems, headersOf, parseBody } from './contract-check.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LISTENING = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ServerProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;
  private readonly hardTimeout: NodeJS.Timeout;
  private waiters: (() => void)[] = [];

  /**
   * `env` is added to PORT=0, HOST=127.0.0.1 and PETSTORE_LOG_LEVEL=warn. `wrapper`: a command
   * that execs the server in its place (`sh -c 'ulimit -n 300 && exec "$@"' sh`, `sh -c 'umask 0; exec "$@"' sh`),
   * so the child's pid is still the server's.
   */
  constructor(env: Record<string, string>, hardTimeoutMs = 40_000, wrapper: string[] = []) {
    const command = [...wrapper, process.execPath, '--import', 'tsx', 'src/main.ts'];
    this.child = spawn(command[0]!, command.slice(1), {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        TMPDIR: process.env.TMPDIR ?? tmpdir(),
        PORT: '0',
        HOST: '127.0.0.1',
        PETSTORE_LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      this.stdout += s;
      this.wake();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    void this.exited.then(() => this.wake());
    this.hardTimeout = setTimeout(() => this.kill(), hardTimeoutMs);
    this.hardTimeout.unref();
  }

  /** Complete lines written to standard output so far. */
  lines(): string[] {
    const all = this.stdout.split('\n');
    all.pop();
    return all;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the port once the listening line is out; rejects if the process ends first. */
  async port(): Promise<number> {
    for (;;) {
      const line = this.lines().find((l) => LISTENING.test(l));
      if (line) return Number(LISTENING.exec(line)![1]);
      if (!this.running) throw new Error(`server exited before listening:\n${this.stdout}\n${this.stderr}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (signal === 'SIGKILL') clearTimeout(this.hardTimeout);
    if (this.running) this.child.kill(signal);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** Waits for an exit, failing after `ms` instead of hanging. */
export async function exitWithin(p: ServerProcess, ms: number): Promise<Exit> {
  const timer = delay(ms).then(() => 'timeout' as const);
  const result = await Promise.race([p.exited, timer]);
  if (result === 'timeout') throw new Error(`process did not exit within ${ms} ms:\n${p.stdout}\n${p.stderr}`);
  return result;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** An answer that breaks the contract: not to be taken for a connection that died with its process. */
export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

/** The request an answer is checked against the contract for (test/support/contract-check.ts). */
export interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  unchecked?: boolean;
}

/** Reads a whole response, parsing JSON bodies, and checks it against the contract like every other answer. */
export function collect(res: IncomingMessage, sent: Sent, resolve: (r: Reply) => void, reject: (e: Error) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('error', reject);
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      const headers = headersOf(res.headers);
      const body = parseBody(headers, text);
      const problems = sent.unchecked ? [] : contractProblems(sent.method, sent.url, { status: res.statusCode!, headers, text, body }, sent.headers);
      if (problems.length > 0) reject(new ContractViolation(`${sent.method} ${sent.url} -> ${res.statusCode}: ${problems.join('; ')}`));
      else resolve({ status: res.statusCode!, headers: res.headers, body });
    } catch (err) {
      reject(err as Error);
    }
  });
}

/** One request to a server process on loopback, its answer checked against the contract; keep-alive only when an agent is given. */
export function call(
  port: number,
  method: string,
  path: string,
  opts: {
    key?: string;
    body?: unknown;
    agent?: Agent;
    headers?: Record<string, string>;
    /** Not an operation of the API's document (another listener's paths, such as the metrics port's): not checked. */
    unchecked?: boolean;
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers['x-api-key'] = opts.key;
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const sent = { method, url: `http://127.0.0.1:${port}${path}`, headers, unchecked: opts.unchecked };
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: opts.agent ?? false }, (res) => collect(res, sent, resolve, reject));
    req.on('error', reject);
    req.end(payload);
  });
}

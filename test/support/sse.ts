/**
 * Server-Sent Events in tests, read the plain way: fetch, then the body's bytes split into frames
 * exactly as sent, so a test can check the framing itself (CONTRACT section 14). The head of a
 * stream (status, headers) is checked against the contract like every other answer; a refusal
 * (JSON, before any stream) is read whole and checked as usual.
 */
import { expect } from 'vitest';
import { contractProblems, parseBody, type CheckedResponse } from './contract-check.js';

/** One frame as sent: its raw text (without the blank line that ends it) and its fields. */
export interface Frame {
  raw: string;
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  /** A comment line (`: ping`), without the colon and space. */
  comment?: string;
}

export function parseFrame(raw: string): Frame {
  const f: Frame = { raw };
  for (const line of raw.split('\n')) {
    if (line.startsWith(':')) f.comment = line.slice(1).trimStart();
    else {
      const at = line.indexOf(':');
      const name = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
      if (name === 'id' || name === 'event' || name === 'retry') f[name] = value;
      else if (name === 'data') f.data = f.data === undefined ? value : `${f.data}\n${value}`;
    }
  }
  return f;
}

/** An open stream: frames as they arrive. */
export class FrameReader {
  /** Everything received so far, as text. */
  text = '';
  private buffered = '';
  private readonly frames: Frame[] = [];
  private waiting: (() => void) | undefined;
  private done = false;
  /** When the server ended the stream (ms, performance.now()), once it has. */
  endedAt: number | undefined;
  private readonly decoder = new TextDecoder();

  constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {
    void this.pump();
  }

  private async pump(): Promise<void> {
    const reader = this.response.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const chunk = this.decoder.decode(value, { stream: true });
        this.text += chunk;
        this.buffered += chunk;
        let end: number;
        while ((end = this.buffered.indexOf('\n\n')) >= 0) {
          this.frames.push(parseFrame(this.buffered.slice(0, end)));
          this.buffered = this.buffered.slice(end + 2);
        }
        this.wake();
      }
    } catch {
      // aborted by the test, or cut
    } finally {
      this.done = true;
      this.endedAt = performance.now();
      this.wake();
    }
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  private async changed(deadline: number, what: string): Promise<void> {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out waiting for ${what}; received so far: ${JSON.stringify(this.text.slice(-500))}`);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, left);
      this.waiting = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  /** The next frame (any kind), within `timeoutMs`. */
  async next(timeoutMs = 5_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (this.done) throw new Error(`the stream ended; received: ${JSON.stringify(this.text.slice(-500))}`);
      await this.changed(deadline, 'a frame');
    }
    return this.frames.shift()!;
  }

  /** The next frame that carries an event (pings skipped), within `timeoutMs`. */
  async nextEvent(timeoutMs = 5_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = await this.next(Math.max(1, deadline - Date.now()));
      if (f.comment === undefined) return f;
    }
  }

  /** The events' frames received until the stream ends (within `timeoutMs`). */
  async untilEnd(timeoutMs = 5_000): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.done) await this.changed(deadline, 'the end of the stream');
    return this.frames.splice(0);
  }

  /** Frames received and not yet taken, without waiting. */
  pending(): Frame[] {
    return [...this.frames];
  }

  get ended(): boolean {
    return this.done;
  }

  /** Closes the stream from the client's side. */
  close(): void {
    this.abort.abort();
  }
}

export type Opened = { ok: true; reader: FrameReader; head: CheckedResponse } | { ok: false; res: CheckedResponse };

/**
 * Opens `GET {url}` as a stream. A 200 is checked (head only: the body is a stream) and returned as a
 * FrameReader; anything else is read whole and checked against the contract.
 */
export async function openStream(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (response.status === 200) {
    const head: CheckedResponse = { status: 200, headers: response.headers, text: '', body: '' };
    expect(contractProblems('GET', url, head, headers), `GET ${url} -> 200`).toEqual([]);
    return { ok: true, reader: new FrameReader(response, abort), head };
  }
  const text = await response.text();
  const res: CheckedResponse = { status: response.status, headers: response.headers, text, body: parseBody(response.headers, text) };
  expect(contractProblems('GET', url, res, headers), `GET ${url} -> ${res.status} ${text.slice(0, 200)}`).toEqual([]);
  return { ok: false, res };
}

/** Opens a stream that must open. */
export async function mustOpen(url: string, headers: Record<string, string> = {}): Promise<FrameReader> {
  const o = await openStream(url, headers);
  if (!o.ok) throw new Error(`GET ${url} answered ${o.res.status}: ${o.res.text}`);
  return o.reader;
}

/** Opens a stream that must be refused; returns the (checked) refusal. */
export async function mustRefuse(url: string, headers: Record<string, string> = {}): Promise<CheckedResponse> {
  const o = await openStream(url, headers);
  if (o.ok) {
    o.reader.close();
    throw new Error(`GET ${url} opened a stream; a refusal was expected`);
  }
  return o.res;
}

/**
 * A fetch for third-party SSE clients (the `eventsource` package): every answer's head checked
 * against the contract, and each request's `X-API-Key` added when given.
 */
export function streamFetch(key?: string): typeof fetch {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (key !== undefined) headers.set('x-api-key', key);
    const url = input instanceof Request ? input.url : String(input);
    const response = await fetch(input, { ...init, headers });
    const sent = Object.fromEntries(headers);
    if (response.status === 200) {
      expect(contractProblems('GET', url, { status: 200, headers: response.headers, text: '', body: '' }, sent)).toEqual([]);
    } else {
      const text = await response.clone().text();
      expect(contractProblems('GET', url, { status: response.status, headers: response.headers, text, body: parseBody(response.headers, text) }, sent)).toEqual([]);
    }
    return response;
  };
}

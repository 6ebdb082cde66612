/**
 * A webhook receiver for the behaviour suite, the same to a test on every target: on the servers a
 * real HTTP server on a loopback port (its host on the target's PETSTORE_WEBHOOK_ALLOW_HOSTS), on
 * the mocks the `onWebhook` handler (a public-looking URL that never leaves the process). It keeps
 * every request it got and answers as the test says: a queue of answers, then 204.
 */
import type { TargetKind, TargetOptions } from './target.js';

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  /** The URL to register. */
  url: string;
  /** What startTarget needs for this receiver to be reachable. */
  targetOptions: Pick<TargetOptions, 'webhooks'>;
  received: ReceivedWebhook[];
  /** Answers for the next requests, in order; after them, 204. */
  answers: Answer[];
  close(): Promise<void>;
}

/** The receiver's answer to one request. */
function next(r: Pick<Receiver, 'answers'>): Answer {
  return r.answers.shift() ?? { status: 204 };
}

export async function startReceiver(kind: TargetKind, opts: { retryBaseSeconds?: number } = {}): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const answers: Answer[] = [];
  if (kind === 'mocks') {
    const r: Receiver = {
      url: 'https://receiver.example/petstore-hook',
      received,
      answers,
      targetOptions: {
        webhooks: {
          retryBaseSeconds: opts.retryBaseSeconds,
          onWebhook: async (request) => {
            received.push({ headers: Object.fromEntries(request.headers), body: await request.text(), at: Date.now() });
            const a = next(r);
            return new Response(null, { status: a.status, headers: a.headers });
          },
        },
      },
      close: async () => undefined,
    };
    return r;
  }
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const a = next(r);
      res.writeHead(a.status, a.headers);
      res.end('a receiver body the log never shows');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const r: Receiver = {
    url: `http://127.0.0.1:${port}/petstore-hook`,
    received,
    answers,
    targetOptions: { webhooks: { allowHosts: ['127.0.0.1'], retryBaseSeconds: opts.retryBaseSeconds } },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return r;
}

/**
 * The server's webhook sender (CONTRACT section 14) against loopback receivers and a resolver the
 * test controls: the SSRF checks at registration and at every connection (a name that rebinds to
 * a private address between the two fails as `blocked`, and nothing connects), the error classes
 * (`redirect` never followed, `timeout`, `refused`, `tls`, `dns`), and the request as sent.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookSender } from './webhook-sender.js';

/** A resolver answering `answers[name]` (in turn, the last one repeating); other names are ENOTFOUND. */
function resolver(answers: Record<string, string[][]>): { lookup: typeof dnsLookup; asked: string[] } {
  const asked: string[] = [];
  const lookup = ((name: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
    asked.push(name);
    const queue = answers[name];
    if (!queue) {
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return setImmediate(() => cb(err, []));
    }
    const list = queue.length > 1 ? queue.shift()! : queue[0]!;
    setImmediate(() => cb(null, list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))));
  }) as unknown as typeof dnsLookup;
  return { lookup, asked };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function receiver(handle: (req: IncomingMessage, body: string, res: import('node:http').ServerResponse) => void): Promise<string> {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const request = (url: string) => ({ url, headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' }, body: '{"id":"evt_1","é":1}' });

describe('webhook sender: SSRF', () => {
  it('refuses at registration a name that resolves to a private address, and accepts a public one', async () => {
    const { lookup } = resolver({ 'inside.test': [['93.184.216.34', '10.0.0.7']], 'outside.test': [['93.184.216.34', '2606:2800:220:1::1']], 'metadata.test': [['169.254.169.254']] });
    const sender = createWebhookSender({ lookup });
    expect(await sender.refuse(new URL('https://inside.test/x'))).toMatch(/private/);
    expect(await sender.refuse(new URL('https://metadata.test/x'))).toMatch(/linkLocal/);
    expect(await sender.refuse(new URL('https://outside.test/x'))).toBeUndefined();
    expect(await sender.refuse(new URL('https://[fe80::1]/x'))).toMatch(/linkLocal/);
    // A name that does not resolve names no private address; each attempt resolves it again.
    expect(await sender.refuse(new URL('https://nowhere.test/x'))).toBeUndefined();
  });

  it('fails a name that rebinds to loopback after registration as `blocked`, without connecting', async () => {
    let hits = 0;
    const host = await receiver((_req, _body, res) => {
      hits++;
      res.end();
    });
    const port = host.split(':')[1];
    const { lookup, asked } = resolver({ 'rebind.test': [['93.184.216.34'], ['127.0.0.1']] });
    const sender = createWebhookSender({ lookup });
    const url = `https://rebind.test:${port}/hook`;
    expect(await sender.refuse(new URL(url))).toBeUndefined();
    expect(await sender.send(request(url))).toEqual({ error: 'blocked' });
    expect(asked).toEqual(['rebind.test', 'rebind.test']);
    expect(hits).toBe(0);
  });

  it('blocks at connection what registration would refuse: http, credentials, private literals, localhost', async () => {
    const sender = createWebhookSender({ lookup: resolver({}).lookup });
    for (const url of ['http://receiver.example/x', 'https://u:p@receiver.example/x', 'https://127.0.0.1/x', 'https://[::1]/x', 'https://10.0.0.1/x', 'https://localhost/x']) {
      expect(await sender.send(request(url)), url).toEqual({ error: 'blocked' });
    }
  });
});

describe('webhook sender: attempts', () => {
  it('POSTs the exact body with the given headers and reports the status and Retry-After', async () => {
    const seen: { method?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    const host = await receiver((req, body, res) => {
      Object.assign(seen, { method: req.method, headers: req.headers, body });
      res.writeHead(429, { 'retry-after': '120' });
      res.end('never read');
    });
    const sender = createWebhookSender({ allowHosts: ['127.0.0.1'] });
    expect(await sender.send(request(`http://${host}/hook`))).toEqual({ status: 429, retryAfter: '120' });
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe('{"id":"evt_1","é":1}');
    expect(seen.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'evt_1', 'content-length': String(Buffer.byteLength(seen.body!)) });
  });

  it('keeps the connection for the next delivery to the same receiver, unless its body is too large', async () => {
    let big = false;
    const host = await receiver((_req, _body, res) => {
      res.writeHead(200);
      res.end(big ? Buffer.alloc(256 * 1024) : 'ok');
    });
    let connections = 0;
    servers.at(-1)!.on('connection', () => connections++);
    const sender = createWebhookSender({ allowHosts: ['127.0.0.1'] });
    for (let i = 0; i < 3; i++) expect(await sender.send(request(`http://${host}/hook`))).toEqual({ status: 200 });
    expect(connections).toBe(1);
    big = true;
    expect(await sender.send(request(`http://${host}/hook`))).toEqual({ status: 200 });
    big = false;
    await new Promise((r) => setTimeout(r, 50));
    expect(await sender.send(request(`http://${host}/hook`))).toEqual({ status: 200 });
    expect(connections).toBe(2);
  });

  it('never follows a redirect', async () => {
    let followed = false;
    const target = await receiver((_req, _body, res) => {
      followed = true;
      res.end();
    });
    const host = await receiver((_req, _body, res) => {
      res.writeHead(307, { location: `http://${target}/elsewhere` });
      res.end();
    });
    const sender = createWebhookSender({ allowHosts: ['127.0.0.1'] });
    expect(await sender.send(request(`http://${host}/hook`))).toEqual({ error: 'redirect' });
    expect(followed).toBe(false);
  });

  it('names a timeout, a refused connection, a failed TLS handshake and an unknown name', async () => {
    const silent = await receiver(() => undefined);
    const sender = createWebhookSender({ allowHosts: ['127.0.0.1'], timeoutMs: 300 });
    expect(await sender.send(request(`http://${silent}/hook`))).toEqual({ error: 'timeout' });
    // A port nobody listens on: the receiver's, once closed.
    const closed = await receiver(() => undefined);
    const s = servers.pop()!;
    await new Promise<void>((r) => s.close(() => r()));
    expect(await sender.send(request(`http://${closed}/hook`))).toEqual({ error: 'refused' });
    // https to a plain HTTP listener: no TLS handshake.
    const plain = await receiver((_req, _body, res) => res.end());
    expect(await sender.send(request(`https://${plain}/hook`))).toEqual({ error: 'tls' });
    // A name that does not resolve is `dns`.
    expect(await createWebhookSender({ lookup: resolver({}).lookup }).send(request('https://nowhere.test/hook'))).toEqual({ error: 'dns' });
  });
});

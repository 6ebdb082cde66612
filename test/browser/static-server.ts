/**
 * A tiny static file server for a built page, on an ephemeral port on 127.0.0.1. It records
 * every request, so a test can prove that nothing but the page's own files was asked for.
 * No fallback to index.html: a stray API request is a 404 here, and stays on the record.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

export interface ServedRequest {
  method: string;
  path: string;
  status: number;
}

export interface StaticServer {
  /** `http://127.0.0.1:<port>`: the page's origin. */
  origin: string;
  requests: ServedRequest[];
  close(): Promise<void>;
}

export async function serveStatic(dir: string): Promise<StaticServer> {
  const requests: ServedRequest[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const file = fileFor(dir, path);
    const served = file !== undefined && (req.method === 'GET' || req.method === 'HEAD');
    requests.push({ method: req.method ?? '', path, status: served ? 200 : 404 });
    if (!served) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The file under `dir` that `path` names (`/` is index.html), or undefined. */
function fileFor(dir: string, path: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const file = normalize(join(dir, decoded.endsWith('/') ? `${decoded}index.html` : decoded));
  if (!file.startsWith(dir + sep)) return undefined;
  try {
    return statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

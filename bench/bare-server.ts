/**
 * The baseline: a bare node:http server that answers `GET /pets?ids=<id>` with that pet, as a
 * one-element JSON array, from a Map (issue 9: "a bare node:http server answering a pet from a
 * Map"); any other request gets 404. The bench runs it as its own child process, pinned to the
 * server core like the real server, and reports the real server's figures as ratios to it.
 * Listens on 127.0.0.1 only, on the port in PORT (0 picks a free one), and prints
 * "listening on http://127.0.0.1:<port>" like src/main.ts.
 */
import { createServer } from 'node:http';

const PETS = Number(process.env.BARE_PETS ?? 150);
const pets = new Map<number, { id: number; name: string; categoryId: number; status: string }>();
for (let id = 1; id <= PETS; id++) pets.set(id, { id, name: `Bench pet ${String(id).padStart(3, '0')}`, categoryId: 1 + (id % 4), status: 'available' });

const server = createServer((req, res) => {
  // Drain any request body before answering, as a real handler would read it.
  req.resume();
  req.on('end', () => {
    const m = /^\/pets\?ids=(\d+)$/.exec(req.url ?? '');
    const pet = m ? pets.get(Number(m[1])) : undefined;
    if (!pet) {
      res.writeHead(404).end();
      return;
    }
    // Serialised per request, as the real server does.
    const body = JSON.stringify([pet]);
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

/**
 * The webhook row's receivers (bench/webhooks.ts), a child process of the bench: RECEIVERS node:http
 * servers on 127.0.0.1 (ephemeral ports), each answering every POST with 204 and remembering the
 * `pet.created` events it got: the pet's id, and the time from the event's `createdAt` to its
 * arrival here (the same machine's clock). The first server also answers the bench's questions:
 * `GET /_bench/ports` (every receiver's port) and `GET /_bench/received` (what each one got).
 * It prints "listening on http://127.0.0.1:<first port>" once all of them listen.
 */
import http from 'node:http';

const RECEIVERS = Number(process.env.RECEIVERS ?? 100);
if (!Number.isInteger(RECEIVERS) || RECEIVERS < 1 || RECEIVERS > 200) throw new Error(`RECEIVERS must be 1-200, got ${process.env.RECEIVERS}`);

/** Per receiver: pet ids of the pet.created events received (a repeat is a duplicate delivery). */
const ids = Array.from({ length: RECEIVERS }, () => []);
/** Per receiver: arrival minus the event's createdAt, ms. */
const lags = Array.from({ length: RECEIVERS }, () => []);
let other = 0;
let lastAt = 0;

function receive(i, body) {
  lastAt = Date.now();
  try {
    const e = JSON.parse(body);
    if (e.type === 'pet.created' && typeof e.data?.object?.id === 'number') {
      ids[i].push(e.data.object.id);
      lags[i].push(lastAt - Date.parse(e.createdAt));
      return;
    }
  } catch {
    /* counted below */
  }
  other++;
}

const servers = [];
for (let i = 0; i < RECEIVERS; i++) {
  const server = http.createServer((req, res) => {
    if (i === 0 && req.method === 'GET' && req.url === '/_bench/ports') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(servers.map((s) => s.address().port)));
      return;
    }
    if (i === 0 && req.method === 'GET' && req.url === '/_bench/received') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ids, lags, other, lastAt }));
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST') receive(i, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(204).end();
    });
  });
  servers.push(server);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
process.on('SIGTERM', () => process.exit(0));
console.log(`listening on http://127.0.0.1:${servers[0].address().port}`);

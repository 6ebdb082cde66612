/**
 * The baseline: a bare node:http server answering every request with the same JSON body, the
 * size and shape of a page of 20 pets from GET /pets?limit=20. The bench runs it as its own
 * child process (its own event loop) and reports the real server's figures as ratios to it.
 * Listens on 127.0.0.1 only, on the port in PORT (0 picks a free one), and prints
 * "listening on http://127.0.0.1:<port>" like src/main.ts.
 */
import { createServer } from 'node:http';

const categories = ['Dogs', 'Cats', 'Birds', 'Fish'];
const page = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  name: `Pet ${String(i + 1).padStart(3, '0')}`,
  categoryId: (i % categories.length) + 1,
  status: 'available',
}));

const server = createServer((req, res) => {
  // Drain any request body before answering, as a real handler would read it.
  req.resume();
  req.on('end', () => {
    // Serialised per request, as the real server does.
    const body = JSON.stringify(page);
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
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

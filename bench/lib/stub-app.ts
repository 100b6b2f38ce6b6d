/**
 * The gateway bench's stub app (`--stub-app MS`, ADR 0290): stands in for the audience app and
 * answers every request, GET or POST, with the same small JSON after MS milliseconds (0: at
 * once), reading and dropping any request body. Behind the gateway it makes a GET and a POST
 * cost the upstream the same, so the gateway's own cost of each can be compared at the same
 * request rate, and the delay sets that rate (32 connections / MS ms) to compare a fast route
 * with a slow one. Run as its own process (`node -r @swc-node/register bench/lib/stub-app.ts`)
 * with PORT and STUB_DELAY_MS.
 */
import { createServer } from 'node:http';

const delayMs = Number(process.env.STUB_DELAY_MS ?? '0');
// What the bench checks the count route's answer for (10 of its 20 contacts match).
const body = Buffer.from(JSON.stringify({ totalHits: 10, stub: true }));
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const server = createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    if (delayMs > 0) setTimeout(() => res.writeHead(200, headers).end(body), delayMs);
    else res.writeHead(200, headers).end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));

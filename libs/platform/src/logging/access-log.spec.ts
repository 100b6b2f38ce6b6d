import Fastify from 'fastify';
import { logAccess } from './access-log';

describe('access log', () => {
  const answer = async (enabled: boolean) => {
    const lines: object[] = [];
    const app = Fastify();
    logAccess(app, { log: (record) => lines.push(record), enabled: () => enabled });
    app.get('/v1/project/:project/audience/search/email/:userEmail', async () => ({ ok: true }));
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    expect((await fetch(`${origin}/v1/project/p1/audience/search/email/ada@example.com?q=x`)).status).toBe(200);
    await app.close(); // after onResponse: close waits for the request to finish
    return lines;
  };

  it('writes one redacted line per request when info is on', async () => {
    expect(await answer(true)).toEqual([expect.objectContaining({ msg: 'request completed', url: '/v1/project/p1/audience/search/email/:userEmail?q=[redacted]', statusCode: 200 })]);
  });

  it('builds nothing when the level is above info (ADR 0208)', async () => {
    expect(await answer(false)).toEqual([]);
  });
});

import { Body, Controller, Get, Logger, Module, Param, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { bootstrapApp } from '../bootstrap/bootstrap-app';
import { loggerModule } from './logger.module';

type Line = { msg?: string; requestId?: string; req?: { id?: string }; statusCode?: number; url?: string };
const lines: Line[] = [];
const sink = { write: (line: string) => void lines.push(JSON.parse(line) as Line) };

@Controller()
class WorkController {
  // The way controllers and use cases log: Nest's Logger, which the app routes to pino.
  private readonly log = new Logger('work');

  @Get('/work')
  async read() {
    await new Promise((resolve) => setTimeout(resolve, 1));
    this.log.warn('read inside a request');
    return { ok: true };
  }

  @Get('/work/:id')
  one(@Param('id') id: string) {
    return { id };
  }

  @Post('/work')
  async write(@Body() body: { n: number }) {
    await new Promise((resolve) => setImmediate(resolve));
    this.log.warn('write inside a request');
    return { n: body.n };
  }
}

@Module({ imports: [loggerModule('log-spec', 'info', sink)], controllers: [WorkController] })
class LogSpecModule {}

/** The request id a line carries, wherever the logger puts it. */
const idOf = (line: Line | undefined) => line?.requestId ?? line?.req?.id;

describe('log lines written inside a request carry its request id', () => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    app = await bootstrapApp({ app: 'log-spec', module: LogSpecModule, host: '127.0.0.1', port: 0 });
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(() => app?.close());

  it('the caller’s x-request-id, after an await', async () => {
    const res = await fetch(`${base}/work`, { headers: { 'x-request-id': 'spec-read-1' } });
    expect(res.status).toBe(200);
    expect(idOf(lines.find((l) => l.msg === 'read inside a request'))).toBe('spec-read-1');
  });

  it('the id the app made up (the answer header), after the body was read', async () => {
    const res = await fetch(`${base}/work`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: 1 }) });
    expect(res.status).toBe(201);
    const given = res.headers.get('x-request-id');
    expect(given).toMatch(/^[0-9a-f-]{36}$/);
    expect(idOf(lines.find((l) => l.msg === 'write inside a request'))).toBe(given);
  });

  // Fastify's router answers these itself (`frameworkErrors`), before any hook of a route runs.
  it.each([
    ['a path that is not valid percent-encoding', '/work/jane%zz@example.com'],
    ['a path parameter over the longest one any route takes', `/work/${'9'.repeat(2000)}`],
  ])('%s: the refusal gives the request id and has its access line', async (_what, path) => {
    const id = `spec-bad-url-${path.length}`;
    const res = await fetch(`${base}${path}`, { headers: { 'x-request-id': id } });
    expect([400, 414]).toContain(res.status);
    expect(res.headers.get('x-request-id')).toBe(id);
    const line = lines.find((l) => l.msg === 'request completed' && l.requestId === id);
    expect(line).toMatchObject({ statusCode: res.status });
    expect(line?.url).not.toContain('example.com');
  });

  it('lines outside a request carry none', () => {
    expect(idOf(lines.find((l) => l.msg?.startsWith('log-spec listening')))).toBeUndefined();
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { type Socket, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { testEnv } from '@meld/testing';

// The HTTP connections of a Meld app as a caller in front of it sees them: the gateway's pool,
// a cloud load balancer before the gateway. The app runs as built, as in a container; readiness
// stands for every app (one bootstrap, libs/platform).
const root = join(__dirname, '../..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startApp(port: number): Promise<ChildProcess> {
  const env = testEnv();
  const child = spawn(process.execPath, [join('apps', 'readiness', 'dist', 'main.js')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error', PORT: String(port), MELD_POSTGRES_URL: env.postgresUrl, MELD_ALLOW_DEV_SECRETS: '1' },
    stdio: 'ignore',
    // Its own process group: the test ends the whole group, also on failure.
    detached: true,
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`readiness exited (${child.exitCode ?? child.signalCode}) before answering`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) return child;
    await sleep(200);
  }
  throw new Error('readiness did not answer within 30 s');
}

function endGroup(child: ChildProcess | undefined): void {
  if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** A raw keep-alive connection: what arrived on it, and whether the app closed it. */
function open(port: number): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let data = '';
    let closed = false;
    const socket = connect(port, '127.0.0.1');
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('close', () => (closed = true));
    socket.once('error', reject);
    socket.once('connect', () => resolve({ socket, received: () => data, closed: () => closed }));
  });
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await sleep(20);
}

describe('HTTP connections of an app', () => {
  let child: ChildProcess | undefined;
  afterEach(() => endGroup(child));

  it('keeps an idle keep-alive connection 65 s, longer than the 60 s a load balancer in front keeps its own', async () => {
    const port = await freePort();
    child = await startApp(port);
    const conn = await open(port);
    conn.socket.write('GET /healthz HTTP/1.1\r\nHost: meld\r\n\r\n');
    await until(() => conn.received().includes('{"status":"ok"}'), 5000);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(conn.received()).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i);
    // Node's own default closes an idle connection after 5 s.
    await sleep(6500);
    expect(conn.closed()).toBe(false);
    conn.socket.write('GET /healthz HTTP/1.1\r\nHost: meld\r\n\r\n');
    await until(() => conn.received().split('{"status":"ok"}').length === 3, 5000);
    expect(conn.received().split('{"status":"ok"}')).toHaveLength(3);
    conn.socket.destroy();
  }, 60_000);

  it('on SIGTERM answers a request that arrives on an open connection, closes the connection after it, and exits', async () => {
    const port = await freePort();
    child = await startApp(port);
    const exited = new Promise<string>((resolve) => child!.once('exit', (code, signal) => resolve(String(code ?? signal))));
    const conn = await open(port);
    conn.socket.write('GET /healthz HTTP/1.1\r\nHost: meld\r\n\r\n');
    await until(() => conn.received().includes('{"status":"ok"}'), 5000);
    // The caller (the gateway's pool, whose connection outlives the pod's removal from the
    // Service's endpoints) sends its next request just as Kubernetes stops the pod.
    conn.socket.write('GET /healthz HTTP/1.1\r\nHo');
    await sleep(100);
    const stoppedAt = Date.now();
    process.kill(child.pid!, 'SIGTERM');
    await sleep(300);
    conn.socket.write('st: meld\r\n\r\n');
    await until(() => conn.closed(), 10_000);
    const second = conn.received().slice(conn.received().indexOf('{"status":"ok"}') + 15);
    // Answered, not Fastify's 503 'Service Unavailable' (which the gateway passed on to its client).
    expect(second).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/\r\nConnection: close\r\n/i);
    expect(second).toContain('{"status":"ok"}');
    expect(conn.closed()).toBe(true);
    // Nest re-raises the signal once the app is closed: the container's exit code 143.
    expect(await exited).toBe('SIGTERM');
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
  }, 60_000);
});

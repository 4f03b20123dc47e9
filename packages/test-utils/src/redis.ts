import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, Socket } from 'node:net';

/** Debian's Redis server, which CI installs (`.ci/run`). */
export const REDIS_SERVER = '/usr/bin/redis-server';

/**
 * Whether a Redis test must be skipped: {@link REDIS_SERVER} is missing and this is not CI (with
 * `CI=true` the test runs, and fails when Redis is missing). When skipping, says so on the
 * console, naming the test.
 */
export function skipWithoutRedis(what: string): boolean {
  const skip = !existsSync(REDIS_SERVER) && !process.env.CI;
  if (skip) {
    console.warn(
      `${what} skipped: ${REDIS_SERVER} not found. Install Debian's redis-server package to run ` +
        'it; with CI=true it fails instead of skipping.',
    );
  }
  return skip;
}

/** A Redis server of a test's own, on a loopback port, without persistence. */
export interface TestRedis {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (its data is gone) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
}

/**
 * Starts {@link REDIS_SERVER} on a loopback port (`port`, or a free one) with nothing saved to
 * disk, and waits until it answers.
 *
 * @throws Error naming the missing executable when Redis is not installed, or when it does not
 *   answer within 10 s.
 */
export async function startTestRedis(port?: number): Promise<TestRedis> {
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(`${REDIS_SERVER} is missing: install Debian's redis-server package`);
  }
  port ??= await freePort();
  let server: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    server = spawn(
      REDIS_SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await answers(port, 10_000);
  };
  const stop = async (): Promise<void> => {
    const running = server;
    server = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  const url = `redis://127.0.0.1:${port}`;
  return { url, port, stop, start };
}

/** A TCP port free on the loopback address now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once a PING on `port` gets PONG; rejects after `timeoutMs`. */
async function answers(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(data.toString().startsWith('+PONG')));
  });
}

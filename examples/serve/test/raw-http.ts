import { connect, type Socket } from 'node:net';

/** What a raw HTTP exchange got back. */
export interface RawAnswer {
  /** The status code of the first response line (0 when the server sent nothing). */
  readonly status: number;
  /** Everything the server sent. */
  readonly text: string;
  /** Ms from the connection to the server closing it. */
  readonly closedAfter: number;
}

/**
 * Sends `bytes` as they are over a new TCP connection to `url`'s host and port — a request target
 * no URL parser would leave alone (`/v%31/models`, an absolute form, a half body) — and collects
 * the answer until the server closes the connection or `waitMs` pass (the socket is then closed).
 */
export function rawRequest(url: string, bytes: string, waitMs = 5_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const socket: Socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(bytes);
    });
    let text = '';
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (data) => {
      text += data.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({
        status: match ? Number(match[1]) : 0,
        text,
        closedAfter: performance.now() - start,
      });
    });
  });
}

/** A complete HTTP/1.1 request asking the server to close the connection after answering. */
export function httpRequest(
  method: string,
  target: string,
  url: string,
  headers: Record<string, string> = {},
  body = '',
): string {
  const lines = [
    `${method} ${target} HTTP/1.1`,
    `host: ${new URL(url).host}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  if (body !== '') {
    lines.push('content-type: application/json', `content-length: ${Buffer.byteLength(body)}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

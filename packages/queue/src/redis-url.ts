import { LetheError } from '@lethe/core';

/** Where a Redis server is, as read from a `redis://` (or `rediss://`, TLS) URL. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
  /** Database number (the URL's path, default 0). */
  readonly db: number;
  readonly username?: string;
  readonly password?: string;
  /** `rediss://`: the connection uses TLS. */
  readonly tls: boolean;
}

/**
 * Reads a Redis URL: `redis://[[user]:password@]host[:port][/db]`, port 6379 and database 0 by
 * default; `rediss://` for TLS.
 *
 * @example
 * ```ts
 * parseRedisUrl('redis://127.0.0.1:6390/2'); // { host: '127.0.0.1', port: 6390, db: 2, tls: false }
 * ```
 * @throws LetheError `E_ARG` naming `argument` when `url` is not such a URL (another scheme, no
 *   host, a port outside 1–65535, a database that is not an integer ≥ 0, a query or fragment).
 */
export function parseRedisUrl(url: string, argument = 'redis'): RedisAddress {
  if (typeof url !== 'string' || url.trim() === '') {
    throw new LetheError('E_ARG', 'must be a redis:// URL', argument);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new LetheError('E_ARG', `is not a redis:// URL: ${JSON.stringify(url)}`, argument);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new LetheError(
      'E_ARG',
      `must be a redis:// or rediss:// URL, got ${parsed.protocol}`,
      argument,
    );
  }
  if (parsed.hostname === '') throw new LetheError('E_ARG', 'has no host', argument);
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new LetheError('E_ARG', 'takes no query or fragment', argument);
  }
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new LetheError('E_ARG', `has port ${parsed.port}, not 1–65535`, argument);
  }
  const path = parsed.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d+$/.test(path)) {
    throw new LetheError(
      'E_ARG',
      `has database ${JSON.stringify(path)}, not an integer ≥ 0`,
      argument,
    );
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    host,
    port,
    db: path === '' ? 0 : Number(path),
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    tls: parsed.protocol === 'rediss:',
  };
}

/**
 * The ioredis options BullMQ connects with for `address`: commands wait through a reconnect
 * rather than fail (`maxRetriesPerRequest: null`, as BullMQ's workers require), retried every
 * 0.2–2 s.
 */
export function connectionOptions(address: RedisAddress): Record<string, unknown> {
  return {
    host: address.host,
    port: address.port,
    db: address.db,
    ...(address.username === undefined ? {} : { username: address.username }),
    ...(address.password === undefined ? {} : { password: address.password }),
    ...(address.tls ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(200 * times, 2000),
  };
}

/** `address` as a URL without its password, for messages. */
export function redisLabel(address: RedisAddress): string {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `${address.tls ? 'rediss' : 'redis'}://${host}:${address.port}/${address.db}`;
}

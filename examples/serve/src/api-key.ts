import { timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error';

/** Routes anyone may call, with or without the key: liveness and the Prometheus scrape. */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set(['/health', '/metrics']);

/**
 * Whether a request needs the API key, decided on the route the router matched (`route`, the
 * route's pattern such as `/v1/models/:id`; undefined when nothing matched) — never on the raw
 * request target, which a client can spell many ways the router reads as the same route
 * (`/v%31/models`, `http://host/v1/models`, `//v1/models`, …). Every route but
 * {@link PUBLIC_ROUTES} needs it, unmatched ones included (deny by default).
 */
export function needsApiKey(route: string | undefined): boolean {
  return route === undefined || !PUBLIC_ROUTES.has(route);
}

/** 401 unless `header` is `Bearer <key>` (compared in constant time). */
export function checkApiKey(header: string | undefined, key: string): void {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const expected = Buffer.from(key);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ApiError(
      401,
      'missing or wrong API key: send Authorization: Bearer <key>',
      'authentication_error',
      null,
      'invalid_api_key',
    );
  }
}

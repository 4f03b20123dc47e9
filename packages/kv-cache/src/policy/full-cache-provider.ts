import { strictObject } from 'valibot';
import type { PolicyProvider } from './provider';

const NO_OPTIONS = strictObject({});

/** Registry name of the full cache (no eviction, dense reads). */
export const FULL_CACHE = 'full';

/**
 * The full cache as a provider: it builds no policy, so the runtime keeps and reads every entry.
 * Evaluations run it as the reference every budget is a fraction of.
 */
export const fullCacheProvider: PolicyProvider<typeof NO_OPTIONS> = Object.freeze({
  name: FULL_CACHE,
  summary: 'no eviction: every entry is kept and read (the reference of every budget)',
  options: NO_OPTIONS,
  build: () => ({}),
});

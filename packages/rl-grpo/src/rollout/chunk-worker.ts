import type { PolicySnapshot } from './policy-snapshot';

/** One task of a pool worker: a contiguous run of requests and the weights to sample with. */
export interface ChunkTask<TRequest> {
  /** The chunk's requests, in the caller's order. */
  readonly requests: readonly TRequest[];
  /** The weights, shared by every chunk of a run. */
  readonly snapshot: PolicySnapshot;
}

/**
 * What a chunk task returns: every result, the first failure (index within the chunk and the
 * thrown value), or the reason the worker module could not be used.
 */
export type ChunkOutcome<TResult> =
  | { readonly results: TResult[] }
  | { readonly failed: number; readonly error: unknown }
  | { readonly unusable: string };

/**
 * The module every pool thread runs, as a `data:` URL, so that it needs no file of its own
 * (the same code serves the TypeScript sources under test and the ESM and CJS builds). It starts
 * importing the user's module when the thread starts and calls its default export on each
 * request of a {@link ChunkTask} in order, stopping at the first that throws. It returns
 * failures as values: tinypool would turn a throw into a bare error without the request index.
 *
 * @param moduleUrl absolute `file:` URL of the user's worker module (a `data:` module can import
 * only absolute URLs).
 */
export function chunkWorkerUrl(moduleUrl: string): string {
  const source = `const loaded = import(${JSON.stringify(moduleUrl)}).then(
  (module) => typeof module.default === 'function'
    ? { rollout: module.default }
    : { unusable: 'has no default export that is a function' },
  (error) => ({ unusable: 'could not be imported: ' + (error instanceof Error ? error.message : String(error)) }),
);
export default async function runChunk({ requests, snapshot }) {
  const { rollout, unusable } = await loaded;
  if (unusable !== undefined) return { unusable };
  const results = [];
  for (let i = 0; i < requests.length; i++) {
    try {
      results.push(await rollout({ request: requests[i], snapshot }));
    } catch (error) {
      return { failed: i, error };
    }
  }
  return { results };
}
//# sourceURL=lethe-rollout-chunk.mjs
`;
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

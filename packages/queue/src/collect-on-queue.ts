import { type QueueItem, type QueueRunOptions, runOnQueue } from './queue-coordinator';

/**
 * {@link runOnQueue} for a caller that keeps nothing until the end: resolves with every item's
 * result, in item order (a NAMM generation's members, a GRPO update's rollout chunks).
 *
 * @throws the errors of `runOnQueue`.
 * @example
 * ```ts
 * const squares = await collectOnQueue<{ value: number }, number>(
 *   [{ key: '0', payload: { value: 3 } }, { key: '1', payload: { value: 4 } }],
 *   { redis, kind: 'square', run: 'squares-1', requirements },
 * );
 * ```
 */
export async function collectOnQueue<P, R>(
  items: readonly QueueItem<P>[],
  options: QueueRunOptions,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  await runOnQueue<P, R>(
    items,
    (index, result) => {
      results[index] = result;
    },
    options,
  );
  return results;
}

import { LetheError } from '@lethe/core';

/** How many tensors a non-finite-weights error describes before it summarises the rest. */
const LISTED = 5;

/**
 * Throws unless every element of every tensor is finite: a NaN or ±Infinity weight makes the
 * model compute NaN, which would otherwise surface steps later as an error about keys or logits.
 * Checked when weights are loaded, decoded or saved.
 *
 * @param source what the tensors came from, for the message (a file path, `tensors`).
 * @throws LetheError `E_CHECKPOINT` naming the first tensor at fault (in `tensors` order); the
 *   message names `source` and, per tensor, how many elements are not finite and the first one.
 */
export function checkFiniteWeights(
  tensors: Record<string, { readonly data: ArrayLike<number> }>,
  source: string,
): void {
  const problems: string[] = [];
  let first: string | undefined;
  for (const [name, { data }] of Object.entries(tensors)) {
    let count = 0;
    let at = -1;
    for (let i = 0; i < data.length; i++) {
      if (!Number.isFinite(data[i]!)) {
        count++;
        if (at < 0) at = i;
      }
    }
    if (count === 0) continue;
    first ??= name;
    problems.push(
      `${name}: ${count} non-finite element${count > 1 ? 's' : ''}, the first ${data[at]} at index ${at}`,
    );
  }
  if (first === undefined) return;
  const listed = problems.slice(0, LISTED).join('; ');
  const more = problems.length > LISTED ? `; and ${problems.length - LISTED} more tensors` : '';
  throw new LetheError(
    'E_CHECKPOINT',
    `non-finite weights in ${source} (${problems.length} tensor${problems.length > 1 ? 's' : ''}): ${listed}${more}`,
    first,
  );
}

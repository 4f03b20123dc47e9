/**
 * Replaces `p[start .. end)` (a row's logits over the entries it attends to) by exp(logit − max)
 * and returns 1 / their sum: the BAM scorer's softmax, shared by its portable form and its
 * WebAssembly kernel so that both take the same exponentials (`Math.exp`) in the same order.
 */
export function softmaxTail(p: Float64Array, start: number, end: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let j = start; j < end; j++) if (p[j]! > max) max = p[j]!;
  let sum = 0;
  for (let j = start; j < end; j++) {
    const e = Math.exp(p[j]! - max);
    p[j] = e;
    sum += e;
  }
  return 1 / sum;
}

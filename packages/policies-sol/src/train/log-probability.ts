/**
 * `log softmax(logits / temperature)[index]`, computed in float64 from the float32 logits (max
 * subtracted first). Both the sampling log-probability of a controller action and the LM's
 * token log-likelihood of a rollout use it.
 */
export function logProbabilityAt(
  logits: ArrayLike<number>,
  index: number,
  temperature = 1,
): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]! / temperature);
  let total = 0;
  for (let i = 0; i < logits.length; i++) total += Math.exp(logits[i]! / temperature - max);
  return logits[index]! / temperature - max - Math.log(total);
}

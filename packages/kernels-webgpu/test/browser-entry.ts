import { type Case, checkBatch, checkCase } from './attention-case';
import { checkObservation, type ObservationCase } from './observation-case';

/**
 * Runs attention cases, a batch of cases of one shape and observation cases on the page's own
 * WebGPU device; what `device-browser.test.ts` calls.
 */
export async function runCases(
  cases: readonly Case[],
  batch: readonly Case[],
  observations: readonly ObservationCase[],
) {
  const adapter = await navigator.gpu.requestAdapter();
  if (adapter === null) throw new Error('no WebGPU adapter in this page');
  const device = await adapter.requestDevice();
  const results = [];
  for (const c of cases) results.push(await checkCase(device, c));
  const { worst: batchWorst } = await checkBatch(device, batch);
  const observed = [];
  for (const c of observations) observed.push(await checkObservation(device, c));
  device.destroy();
  return { adapter: adapter.info.vendor, results, batchWorst, observed };
}

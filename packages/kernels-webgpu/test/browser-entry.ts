import { type Case, checkCase } from './attention-case';

/** Runs attention cases on the page's own WebGPU device; what `device-browser.test.ts` calls. */
export async function runCases(cases: readonly Case[]) {
  const adapter = await navigator.gpu.requestAdapter();
  if (adapter === null) throw new Error('no WebGPU adapter in this page');
  const device = await adapter.requestDevice();
  const results = [];
  for (const c of cases) results.push(await checkCase(device, c));
  device.destroy();
  return { adapter: adapter.info.vendor, results };
}

import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import './register-gradients';
import './wasm-kernels/register';
import { LetheError } from '@lethe/core';
import { chooseMatMulForAdapter } from './software-matmul';
import { tf } from './tf';
import { ensureWebGpu, isSoftwareAdapter } from './webgpu-node';

/**
 * A tensor backend Lethe can run on. `auto` picks `webgpu` when a hardware adapter exists, else
 * `wasm`, else `cpu`.
 */
export type BackendName = 'auto' | 'wasm' | 'webgpu' | 'cpu';

const BACKENDS: readonly BackendName[] = ['auto', 'wasm', 'webgpu', 'cpu'];

/**
 * Selects and readies a tensor backend. Call once before creating tensors.
 *
 * - `auto`: `webgpu` when a hardware adapter exists, else `wasm` (saying so once per process),
 *   else (with a warning) `cpu`. A software adapter (SwiftShader, `isFallbackAdapter`) is never
 *   chosen here: it is slower than `wasm`.
 * - `wasm`: ships its `.wasm` inside the npm package.
 * - `webgpu`: `navigator.gpu` in browsers; in Node the optional `webgpu` package (Dawn), with a
 *   fallback to SwiftShader from Debian's `chromium` package on Linux without a GPU (see
 *   {@link ensureWebGpu}). Accepts software adapters.
 * - `cpu`: pure JavaScript, slow; the fallback of last resort.
 *
 * @returns the name of the backend now active.
 * @throws LetheError `E_BACKEND` when the requested backend cannot start.
 * @example
 * ```ts
 * import { initBackend, tf } from '@lethe/tensor';
 * await initBackend('wasm');
 * tf.sum(tf.ones([4])).print();
 * ```
 */
export async function initBackend(name: BackendName = 'auto'): Promise<string> {
  if (!BACKENDS.includes(name)) {
    throw new LetheError(
      'E_ARG',
      `unknown backend "${name}"; use one of ${BACKENDS.join(', ')}`,
      'name',
    );
  }
  if (name === 'auto') {
    if (await ensureWebGpu({ required: false, allowSoftware: false })) return activate('webgpu');
    try {
      const active = await activate('wasm');
      if (!saidAutoFallback) {
        saidAutoFallback = true;
        console.warn('@lethe/tensor: backend auto: no hardware WebGPU adapter here; using wasm');
      }
      return active;
    } catch (error) {
      // The documented last resort of `auto`; said out loud, since cpu is far slower.
      console.warn(`@lethe/tensor: ${(error as Error).message}; falling back to the cpu backend`);
      return activate('cpu');
    }
  }
  if (name === 'webgpu') {
    await ensureWebGpu({ required: true });
    chooseMatMulForAdapter(isSoftwareAdapter());
  }
  return activate(name);
}

/** Whether `auto` has said, in this process, that it fell back from WebGPU. */
let saidAutoFallback = false;

async function activate(name: Exclude<BackendName, 'auto'>): Promise<string> {
  let ok = false;
  try {
    ok = await tf.setBackend(name);
    await tf.ready();
  } catch (cause) {
    throw new LetheError(
      'E_BACKEND',
      `backend "${name}" failed to start: ${String(cause)}`,
      'name',
    );
  }
  if (!ok || tf.getBackend() !== name) {
    throw new LetheError('E_BACKEND', `backend "${name}" is not available here`, 'name');
  }
  if (name === 'cpu') skipCpuNodeBanner();
  return name;
}

/**
 * tfjs-backend-cpu prints a banner advising `tfjs-node` on its first tensor write when the
 * `IS_NODE` flag is set; Lethe does not use tfjs-node. That first write is made here, with the
 * flag off for its duration only; every other tfjs warning still prints.
 */
function skipCpuNodeBanner(): void {
  const env = tf.env();
  if (!env.getBool('IS_NODE')) return;
  env.set('IS_NODE', false);
  try {
    tf.scalar(0).dispose();
  } finally {
    env.set('IS_NODE', true);
  }
}

/** Name of the active backend, or undefined before {@link initBackend}. */
export function activeBackend(): string | undefined {
  return tf.engine().backendName ?? undefined;
}

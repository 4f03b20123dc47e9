import * as tensor from '@lethe/tensor';
import { runAsyncReadmeExample } from '@lethe/test-utils';
import { expect, it } from 'vitest';
import * as api from '../src/index';
import { skipWebGpu } from './webgpu-setup';

it.skipIf(skipWebGpu)('the README example runs and prints what its comments say', async () => {
  const buffers = api.liveGpuBuffers().buffers;
  const { source, printed } = await runAsyncReadmeExample(
    new URL('../README.md', import.meta.url),
    {
      '@lethe/tensor': tensor,
      '@lethe/kernels-webgpu': api,
    },
  );
  // The printed lines are the `// ` comment lines that follow a console.log in the example.
  const expected = [...source.matchAll(/console\.log\([^\n]*\);\n\/\/ (.*)$/gm)].map((m) => m[1]);
  expect(expected).toHaveLength(2);
  expect(printed).toEqual(expected);
  expect(api.liveGpuBuffers().buffers).toBe(buffers);
});

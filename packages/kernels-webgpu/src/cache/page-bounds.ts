import { submitUploadedPass } from '../kernels/one-pass';
import { pageBoundsSource } from '../kernels/page-bounds-wgsl';

/**
 * Recomputes the key bounds of the pages `list` names (`[page, entries]` pairs) from the pool's
 * `keys` into `bounds`, in one pass (see `pageBoundsSource`), submitted now: after the writes and
 * moves that changed them.
 */
export function refreshPageBounds(
  device: GPUDevice,
  keys: GPUBuffer,
  bounds: GPUBuffer,
  list: Uint32Array,
  hd4: number,
  pageSize: number,
): void {
  const pages = list.length / 2;
  if (pages === 0) return;
  submitUploadedPass(
    device,
    'page bounds',
    pageBoundsSource(),
    [
      {
        data: Uint32Array.of(pages, hd4, pageSize, 0),
        label: 'page bound parameters',
        uniform: true,
      },
      { data: list, label: 'pages to bound' },
    ],
    [keys, bounds],
    Math.ceil((pages * hd4) / 64),
  );
}

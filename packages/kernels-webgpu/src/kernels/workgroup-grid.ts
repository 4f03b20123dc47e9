/** `[x, y]` workgroup counts covering `groups` workgroups within the device's per-dimension limit. */
export function workgroupGrid(device: GPUDevice, groups: number): [number, number] {
  const limit = device.limits.maxComputeWorkgroupsPerDimension;
  const x = Math.min(Math.max(groups, 1), limit);
  return [x, Math.ceil(Math.max(groups, 1) / x)];
}

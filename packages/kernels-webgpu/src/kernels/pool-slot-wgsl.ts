/**
 * WGSL of `poolSlot(h, i)`: the pool slot of live entry `i` of KV head `h` of the cache whose
 * page-table rows start at `params.tableBase` — `table[(tableBase + h)·tableStride + ⌊i /
 * pageSize⌋]·pageSize + i mod pageSize`. A kernel including it binds `table` and has `tableBase`,
 * `tableStride` and `pageSize` in its `params`.
 */
export const POOL_SLOT_WGSL = /* wgsl */ `
fn poolSlot(h: u32, i: u32) -> u32 {
  let page = table[(params.tableBase + h) * params.tableStride + i / params.pageSize];
  return page * params.pageSize + i % params.pageSize;
}
`;

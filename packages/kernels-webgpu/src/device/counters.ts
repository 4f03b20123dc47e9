/** What this package has asked of devices so far (over all devices). */
export interface DeviceCounters {
  /** Host → device bytes: every `writeBuffer` (new keys and values, page tables, plans, queries). */
  readonly uploadedBytes: number;
  /** Device → host bytes: every read-back. */
  readonly downloadedBytes: number;
  /** Compute dispatches (attention passes, merges, compactions). */
  readonly dispatches: number;
}

let uploaded = 0;
let downloaded = 0;
let dispatched = 0;

/** Counts an upload of `bytes`. */
export function countUpload(bytes: number): void {
  uploaded += bytes;
}

/** Counts a read-back of `bytes`. */
export function countDownload(bytes: number): void {
  downloaded += bytes;
}

/** Counts `count` compute dispatches. */
export function countDispatches(count: number): void {
  dispatched += count;
}

/**
 * The host↔device bytes and the dispatches this package has asked for since the process started
 * (a benchmark takes the difference over the steps it times). tfjs's own are not included.
 */
export function deviceCounters(): DeviceCounters {
  return { uploadedBytes: uploaded, downloadedBytes: downloaded, dispatches: dispatched };
}

/** Bytes this package moved between host and device so far (over all devices). */
export interface DeviceTraffic {
  /** Host → device: every `writeBuffer` (new keys and values, page tables, plans, queries). */
  readonly uploadedBytes: number;
  /** Device → host: every read-back. */
  readonly downloadedBytes: number;
}

let uploaded = 0;
let downloaded = 0;

/** Counts an upload of `bytes`. */
export function countUpload(bytes: number): void {
  uploaded += bytes;
}

/** Counts a read-back of `bytes`. */
export function countDownload(bytes: number): void {
  downloaded += bytes;
}

/**
 * The host↔device bytes this package has moved since the process started (a benchmark takes the
 * difference over the steps it times). tfjs's own transfers are not included.
 */
export function deviceTraffic(): DeviceTraffic {
  return { uploadedBytes: uploaded, downloadedBytes: downloaded };
}

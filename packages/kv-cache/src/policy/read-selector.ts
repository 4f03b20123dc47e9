import type { PageRanking } from '../read/page-ranking';
import type { LayerObservation, ObservationNeeds } from './observation';

/**
 * A read-time page selector (Quest-style query-aware sparsity). Unlike an eviction policy it
 * removes nothing: for one decode step it picks, per KV head, which pages of the live entries the
 * attention of the current token reads. The result restricts the read exactly as
 * `LayerControls.readPages` does.
 *
 * A runtime calls it inside each layer, after computing the current token's query and before
 * attention: `readPages = selector.selectPages(cache.observe(layer, selector.needs), query)`.
 * Page `p` of KV head `h` holds that head's live entries `[p·pageSize, (p+1)·pageSize)`, so
 * `pageSize` must equal the cache geometry's `pageSize`. The observation describes the cache
 * before the current token is appended (the current token always sees itself).
 */
export interface ReadSelector {
  /** Human-readable method name, e.g. `"quest"`. */
  readonly name: string;
  /**
   * Observation fields the selector reads. `hidden` is not available inside a layer (the
   * current query is passed instead), so a selector must not ask for it.
   */
  readonly needs: ObservationNeeds;
  /** Live entries per page; must match the cache's `pageSize`. */
  readonly pageSize: number;
  /**
   * Pages to read for the current token, one `Int32Array` of page indices per KV head,
   * or `undefined` for a dense read of every live entry.
   *
   * @param observation The layer's observation (with the fields in `needs`).
   * @param query The current token's query after RoPE, `[queryHeads, headDim]`.
   */
  selectPages(
    observation: LayerObservation,
    query: Float32Array,
  ): readonly Int32Array[] | undefined;

  /**
   * Optional: the same choice as `selectPages` for a layer whose KV heads hold `liveCounts`
   * entries, described as a ranking of pages by Quest's bound (per KV head, or undefined for a
   * dense read; undefined when the whole layer reads densely), so that a cache that keeps its keys
   * and page bounds on a device ranks the pages there, with the query never leaving it
   * (`@lethe/kernels-webgpu`). A selector without it is run on the host (`selectPages`).
   */
  pageRanking?(layer: number, liveCounts: Int32Array): PageRanking | undefined;
}

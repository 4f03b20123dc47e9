import { Rng } from '@lethe/core';
import { KVCache, type PolicySet, type PreparedPolicy, type ReadSelector } from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/decoder-model';
import { policyContextOf } from '../runtime/policy-context';
import { MATRIX_NEW_TOKENS } from './generate-loop';
import {
  everyEntryKeptWatch,
  type GenerateWatch,
  generateWhere,
  watchedGenerate,
} from './generate-watch';
import { kvCacheLoopContext } from './kv-cache-loop';
import { expectThat } from './matrix-failure';
import { type MatrixMode, modeBudget, modeReadPages } from './matrix-modes';

/**
 * What a read selector chose at one layer of one step: per KV head the pages it read, ascending,
 * or `null` for a dense read of the whole layer.
 */
export type LayerPages = number[][] | null;

/** What the read-selector `KVCache` loop records of one sequence. */
export interface SelectedReads {
  /** Per step and layer, the pages read (see {@link LayerPages}). */
  readonly pages: LayerPages[][];
  /** Head reads (step × layer × KV head) that left out at least one page the head held. */
  readonly skipped: number;
}

/** Live pages of a head holding `live` entries, in pages of `pageSize`. */
const pagesOf = (live: number, pageSize: number) => Math.ceil(live / pageSize);

/**
 * Checks one layer's choice of a read selector, called as the runtime calls it: `undefined` (a
 * dense read) only when no head holds more than `budget` pages; otherwise one page list per KV
 * head, every page inside `[0, ceil(live / pageSize))`, at most `budget` distinct pages, the
 * newest page among them. Returns the choice as plain data and the heads that skipped a page.
 *
 * @throws PolicyMatrixFailure naming the check.
 */
function checkLayerPages(
  pages: readonly Int32Array[] | undefined,
  live: Int32Array,
  pageSize: number,
  budget: number,
  where: string,
): { pages: LayerPages; skipped: number } {
  const held = Array.from(live, (n) => pagesOf(n, pageSize));
  if (pages === undefined) {
    expectThat(
      held.every((n) => n <= budget),
      'within the read budget',
      where,
      () => `a dense read of heads holding [${held}] pages; the budget is ${budget} pages`,
    );
    return { pages: null, skipped: 0 };
  }
  expectThat(
    Array.isArray(pages) && pages.length === live.length,
    'one page list per KV head',
    where,
    () => `${Array.isArray(pages) ? pages.length : typeof pages} lists for ${live.length} heads`,
  );
  let skipped = 0;
  const chosen = pages.map((list, h) => {
    const count = held[h]!;
    expectThat(
      list instanceof Int32Array,
      'valid pages',
      where,
      () => `head ${h}'s pages are not an Int32Array`,
    );
    const read = [...new Set(list)].sort((a, b) => a - b);
    expectThat(
      read.every((p) => p >= 0 && p < count),
      'valid pages',
      where,
      () => `head ${h} reads pages [${[...list]}] of ${count}`,
    );
    expectThat(
      read.length <= budget,
      'within the read budget',
      where,
      () => `head ${h} reads ${read.length} pages [${read}]; the budget is ${budget} pages`,
    );
    expectThat(
      count === 0 || read.includes(count - 1),
      'reads the newest page',
      where,
      () => `head ${h} reads pages [${read}] of ${count}`,
    );
    if (read.length < count) skipped += 1;
    return read;
  });
  return { pages: chosen, skipped };
}

/**
 * The `KVCache` loop of a read selector: the sequences run interleaved token by token — each
 * with its own `KVCache` (pages of the selector's `pageSize`) and random stream, all sharing one
 * selector — over `steps` tokens of random keys, values and queries on the KVCache loop's model
 * shape. At every layer of every token the selector is called as the runtime's decode step calls
 * it, before the token is appended: `selectPages(cache.observe(layer, needs), query)`, and its
 * choice is checked (valid pages, at most the mode's page budget per KV head — see
 * `modeReadPages` — the newest page read, a dense read only when every head fits the budget).
 * Returns each sequence's choices and how often a head left a page out.
 *
 * @throws PolicyMatrixFailure naming the check and the token.
 */
export function readCacheLoop(
  selector: ReadSelector,
  seeds: readonly number[],
  steps: number,
  mode: MatrixMode,
): SelectedReads[] {
  const { layers, kvHeads, queryHeads, headDim } = kvCacheLoopContext(seeds.length).model;
  const { pageSize, needs } = selector;
  const budget = modeReadPages(mode, pageSize);
  const runs = seeds.map((seed) => ({
    cache: new KVCache({
      geometry: { layers, kvHeads, headDim, pageSize },
      queryHeads,
      queryWindow: needs.attentionWindow,
      trackAttention: needs.accumulatedAttention,
    }),
    data: new Rng(seed),
    pages: [] as LayerPages[][],
    skipped: 0,
  }));
  for (let t = 0; t < steps; t++) {
    for (const [s, run] of runs.entries()) {
      const { cache, data } = run;
      const positions = Int32Array.of(t);
      const step: LayerPages[] = [];
      for (let layer = 0; layer < layers; layer++) {
        const query = data.normal(queryHeads * headDim);
        const live = cache.liveCounts(layer);
        const chosen = selector.selectPages(cache.observe(layer, needs), query);
        const where = `KVCache loop, sequence ${s}, token ${t}, layer ${layer}`;
        const checked = checkLayerPages(chosen, live, pageSize, budget, where);
        step.push(checked.pages);
        run.skipped += checked.skipped;
        cache.append(
          layer,
          data.normal(kvHeads * headDim),
          data.normal(kvHeads * headDim),
          positions,
        );
        cache.recordQueries(layer, query, positions);
      }
      run.pages.push(step);
    }
  }
  return runs.map(({ pages, skipped }) => ({ pages, skipped }));
}

/** What one `generate()` run of a read selector produced. */
export interface ReadOutcome {
  readonly tokens: number[][];
  /** Per sequence, the cached entries each decode step read, summed over layers and KV heads. */
  readonly reads: number[][];
  /** Per sequence, the cached entries its decode steps would have read densely. */
  readonly live: number[];
}

/**
 * The watch of a read selector (`set.readSelector`, built under `mode`'s read budget) in a run of
 * `sequences` sequences: the entries each decode step read (`StepEvent.reads`, summed over
 * layers and KV heads) never exceed what the mode's page budget allows that step — per layer and
 * KV head the live entries or `modeReadPages` full pages, whichever is fewer — and are counted at
 * every decode step. Records them, and the entries the steps would have read densely.
 *
 * @throws PolicyMatrixFailure when the set has no read selector.
 */
export function readWatch(
  set: PolicySet,
  mode: MatrixMode,
  sequences: number,
  where: string,
): GenerateWatch<Omit<ReadOutcome, 'tokens'>> {
  const { readSelector } = set;
  expectThat(readSelector !== undefined, 'builds a read selector', where, () => 'none was built');
  const most = modeReadPages(mode, readSelector.pageSize) * readSelector.pageSize;
  const reads: number[][] = Array.from({ length: sequences }, () => []);
  // per sequence, the step now running: its allowance and the reads counted when it began
  const running: ({ allowed: number; before: number } | undefined)[] = reads.map(() => undefined);
  const settle = (b: number, readSoFar: number) => {
    const step = running[b];
    if (step === undefined) return;
    const read = readSoFar - step.before;
    expectThat(
      read <= step.allowed,
      'within the read budget',
      `${where}, sequence ${b}, decode step ${reads[b]!.length}`,
      () => `read ${read} entries; the budget allows ${step.allowed}`,
    );
    reads[b]!.push(read);
    running[b] = undefined;
  };
  return {
    options: {
      readSelector,
      onStep: ({ sequences: stepping, caches, reads: counted }) => {
        for (const b of stepping) {
          settle(b, counted[b]!.entries);
          let allowed = 0;
          for (let layer = 0; layer < caches[b]!.geometry.layers; layer++) {
            for (const live of caches[b]!.liveCounts(layer)) allowed += Math.min(live, most);
          }
          running[b] = { allowed, before: counted[b]!.entries };
        }
      },
    },
    finish(result) {
      const { stats } = result;
      for (const [b, tokens] of result.tokens.entries()) {
        settle(b, stats.reads[b]!.entries);
        expectThat(
          reads[b]!.length === tokens.length - 1,
          'reads counted at every decode step',
          `${where}, sequence ${b}`,
          () => `${reads[b]!.length} steps counted of ${tokens.length - 1}`,
        );
      }
      return { reads, live: stats.reads.map((r) => r.live) };
    },
  };
}

/**
 * Checks that every sequence of a read selector's run read fewer entries than its decode steps
 * would have read densely.
 *
 * @throws PolicyMatrixFailure naming the check.
 */
export function expectSparseReads(
  outcome: Pick<ReadOutcome, 'reads' | 'live'>,
  where: string,
): void {
  const read = outcome.reads.map((steps) => steps.reduce((sum, n) => sum + n, 0));
  expectThat(
    read.every((entries, b) => entries < outcome.live[b]!),
    'reads fewer entries than the cache holds',
    where,
    () => `read [${read}] of [${outcome.live}] entries`,
  );
}

/**
 * The `generate()` loop of a read selector: greedy decoding of `prompts` on `model` under the
 * read selector built for the batch. Checks: no tensor left behind, the cache keeps every entry
 * (a read selector evicts nothing), and the entries each decode step read (`StepEvent.reads`,
 * summed over layers and KV heads) never exceed what the mode's page budget allows that step —
 * per layer and KV head the live entries or `modeReadPages` full pages, whichever is fewer.
 *
 * @throws PolicyMatrixFailure naming the check and the step.
 */
export async function readGenerateLoop(
  prepared: PreparedPolicy,
  model: DecoderModel,
  prompts: readonly Int32Array[],
  streamIds: readonly number[],
  mode: MatrixMode,
): Promise<ReadOutcome> {
  const where = generateWhere(prompts.length);
  const set = prepared.build(modeBudget(mode, 2), policyContextOf(model, prompts.length));
  const watch = readWatch(set, mode, prompts.length, where);
  expectThat(
    set.eviction === undefined,
    'a read selector evicts nothing',
    where,
    () => 'it built an eviction policy',
  );
  const watches = [watch, everyEntryKeptWatch(prompts, where)] as const;
  const run = { model, prompts, streamIds, maxNewTokens: MATRIX_NEW_TOKENS, where };
  const { tokens, outcomes } = await watchedGenerate(run, watches);
  return { tokens, ...outcomes[0] };
}

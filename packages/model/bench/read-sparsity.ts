// Is reading a quarter of the cache as cheap as holding a quarter? Decode throughput at 2,048- and
// 8,192-token contexts: the full cache; StreamingLLM evicting to 25% of the prefilled context (a
// fixed capacity) and to 25% of the context so far (a capacity that grows with it); Quest reading
// 25% — SOL's token keep rate κ = 0.25 (`LayerControls.tokenKeep`) and the `QuestSelector` with a
// 25% token budget — and the share of either StreamingLLM's speed-up each Quest gains. Three
// controls read as many pages as κ = 0.25 with `readPages`, no scoring: drawn at random every
// step (a gathered read of a changing quarter of the full cache), drawn at random once (the same
// scattered quarter every step), and the sink page plus the newest pages (one contiguous
// quarter) — to tell the page choice, the scatter and the changing working set apart. Every
// figure is measured in this one run, repeated (medians), under two schedules: each run decoding
// its steps alone (a single stream: a small cache stays in the CPU's caches from step to step),
// and the runs taking turns a few steps at a time (as concurrent streams do; it also spreads a
// shared machine's speed drift over every run), in a random order every round.
//
//   pnpm --filter @lethe/model bench
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  DEFAULT_READ_ANCHORS,
  type EvictionPolicy,
  KVCache,
  type LayerControls,
  type ReadSelector,
  tokenKeepPageCount,
} from '@lethe/kv-cache';
import { QuestSelector, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { initBackend, Rng } from '@lethe/tensor';
import { type BatchControls, DecoderModel } from '../src/index';
import { quickstartShape } from './quickstart-shape';
import { StreamingShareOfContext } from './streaming-share';

/** Contexts, and the decode steps timed per run at each (fewer where a step is slower). */
const CONTEXTS: readonly (readonly [context: number, steps: number])[] = [
  [2048, 256],
  [8192, 128],
];
const REPEATS = 9;
const PAGE = 16;
const KEEP = 0.25;
const PREFILL_CHUNK = 512;
/** Decode steps a run takes before the next run's turn when the runs take turns. */
const TURN = 32;
/** Entries StreamingLLM's heads may grow by between eviction rounds. */
const SLACK = 32;

// The quickstart's model shape. At 8,192 tokens attention over the cache is most of a decode
// step, at 2,048 about half (the rest is tfjs's fixed cost per op).
const config = quickstartShape(16384);
const LAYERS = config.num_hidden_layers;
const KV_HEADS = config.num_key_value_heads;

// A full garbage collection before each run's turn, so that no run pays for the copies of the
// cache the runs before it dropped.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** How one run decodes. */
interface Run {
  readonly name: string;
  readonly eviction?: EvictionPolicy;
  /** Controls of decode step `s`. */
  readonly controls?: (step: number) => BatchControls;
  readonly readSelector?: ReadSelector;
}

/** What one timed run measured. */
interface Timing {
  readonly tokensPerSecond: number;
  readonly readFraction: number;
  /** Cached entries one KV head's read took, on average over the steps. */
  readonly entriesPerRead: number;
}

/**
 * One run decoding from its own copy of the prefilled cache, as `GenerationSession` would
 * (logits and hidden state read back every step, eviction rounds included), a chunk of steps at
 * a time, with the time spent in those chunks summed.
 */
class TimedDecode {
  private readonly cache: KVCache;
  private readonly state: unknown;
  private readonly since = new Int32Array(LAYERS);
  private readonly options: { readSelector?: ReadSelector };
  private step = 0;
  private milliseconds = 0;
  private read = 0;
  private live = 0;

  constructor(
    private readonly model: DecoderModel,
    base: KVCache,
    private readonly run: Run,
    private readonly rng: Rng,
  ) {
    this.cache = base.clone();
    this.state = run.eviction?.createState?.();
    this.options = run.readSelector ? { readSelector: run.readSelector } : {};
    this.evict(); // StreamingLLM: from the full prefix down to its budget, before any clock
  }

  /** Decodes the next `steps` tokens, timed. */
  advance(steps: number): void {
    const { model, cache, run } = this;
    const controls = Array.from({ length: steps }, (_, s) => run.controls?.(this.step + s));
    const start = performance.now();
    for (let s = 0; s < steps; s++) {
      const token = Int32Array.of((5 * (this.step + s) + 3) % config.vocab_size);
      const out = model.decodeStep([cache], token, controls[s], this.options);
      out.logits.dataSync();
      out.logits.dispose();
      out.hidden.dataSync();
      out.hidden.dispose();
      for (const n of out.reads.entries) this.read += n;
      for (const n of out.reads.live) this.live += n;
      this.evict();
    }
    this.milliseconds += performance.now() - start;
    this.step += steps;
  }

  timing(): Timing {
    return {
      tokensPerSecond: this.step / (this.milliseconds / 1000),
      readFraction: this.read / this.live,
      entriesPerRead: this.read / (this.step * LAYERS * KV_HEADS),
    };
  }

  private evict(): void {
    const { run, cache, since } = this;
    const policy = run.eviction;
    if (!policy) return;
    for (let layer = 0; layer < LAYERS; layer++) {
      since[layer]! += 1;
      const context = {
        layer,
        step: cache.length(layer),
        liveCounts: cache.liveCounts(layer),
        sinceLastRound: since[layer]!,
      };
      if (!policy.shouldEvict(context, this.state)) continue;
      cache.keep(layer, policy.select(cache.observe(layer, policy.needs), this.rng, this.state));
      since[layer] = 0;
    }
  }
}

/**
 * One repeat: every run decodes `steps` tokens from its own copy of `base`, the runs taking
 * turns `turn` steps at a time (`turn = steps`: each run alone, one after the other), in a
 * fresh random order every round of turns — a run that follows the full cache finds the CPU's
 * caches full of another cache's entries, so no run may always follow the same one.
 */
function timeRuns(
  model: DecoderModel,
  base: KVCache,
  runs: readonly Run[],
  steps: number,
  turn: number,
  rng: Rng,
): Timing[] {
  const decodes = runs.map((run) => new TimedDecode(model, base, run, rng));
  for (let done = 0; done < steps; done += turn) {
    const order = rng.uniform(decodes.length);
    const shuffled = decodes.map((_, i) => i).sort((i, j) => order[i]! - order[j]!);
    for (const i of shuffled) {
      const decode = decodes[i]!;
      collectGarbage(); // untimed: no run pays for the garbage of the one before it
      decode.advance(Math.min(turn, steps - done));
    }
  }
  return decodes.map((decode) => decode.timing());
}

/** The pages of a cache of `live` entries (pages of {@link PAGE}) and how many a κ read takes. */
function pageCounts(live: number): { pages: number; count: number } {
  return {
    pages: Math.ceil(live / PAGE),
    count: tokenKeepPageCount(KEEP, live, DEFAULT_READ_ANCHORS, PAGE),
  };
}

/**
 * The first and last pages (the read anchors') plus as many others as a κ read chooses, drawn
 * at random among the rest of a cache of `live` entries.
 */
function randomPageList(live: number, rng: Rng): Int32Array {
  const { pages, count } = pageCounts(live);
  const u = rng.uniform(pages - 2);
  const order = Array.from({ length: pages - 2 }, (_, p) => p + 1).sort(
    (a, b) => u[a - 1]! - u[b - 1]!,
  );
  return Int32Array.from([0, ...order.slice(0, count), pages - 1]).sort();
}

/**
 * Per step, in every layer and KV head, a fresh {@link randomPageList} (a fixed draw per run, so
 * every repeat reads the same); with `redraw` false, one draw per layer and KV head read at
 * every step.
 */
function randomPages(
  context: number,
  steps: number,
  rng: Rng,
  redraw: boolean,
): (step: number) => BatchControls {
  const draw = (live: number): BatchControls => [
    Array.from({ length: LAYERS }, () => ({
      readPages: Array.from({ length: KV_HEADS }, () => randomPageList(live, rng)),
    })),
  ];
  if (!redraw) {
    const once = draw(context);
    return () => once;
  }
  const perStep = Array.from({ length: steps }, (_, s) => draw(context + s));
  return (step) => perStep[step]!;
}

/** Per step, the sink page and the newest pages, as many as a κ read chooses plus the last. */
function newestPages(context: number): (step: number) => BatchControls {
  return (step) => {
    const { pages, count } = pageCounts(context + step);
    const newest = Array.from({ length: count + 1 }, (_, i) => pages - count - 1 + i);
    const layer: LayerControls = {
      readPages: Array.from({ length: KV_HEADS }, () => Int32Array.from([0, ...newest])),
    };
    return [Array.from({ length: LAYERS }, () => layer)];
  };
}

function percent(x: number): string {
  return `${(100 * x).toFixed(0)}%`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs before the Quests and controls: the full cache and the two StreamingLLMs. */
const BASELINES = 3;

/**
 * The share of StreamingLLM's speed-up a run gains — from the median `rates`, and its range over
 * the repeats (each from its own runs) — against StreamingLLM run `streaming`.
 */
function shareOf(samples: Timing[][], rates: number[], run: number, streaming: number): string {
  const gainOf = (rate: number, full: number) => rate / full - 1;
  const shares = samples[0]!.map(
    (full, r) =>
      gainOf(samples[run]![r]!.tokensPerSecond, full.tokensPerSecond) /
      gainOf(samples[streaming]![r]!.tokensPerSecond, full.tokensPerSecond),
  );
  const share = gainOf(rates[run]!, rates[0]!) / gainOf(rates[streaming]!, rates[0]!);
  return `${percent(share)} (${percent(Math.min(...shares))}–${percent(Math.max(...shares))})`;
}

/** The rows of one context and schedule: medians, and the shares with their ranges. */
function report(
  context: number,
  schedule: string,
  runs: readonly Run[],
  samples: Timing[][],
): void {
  const rates = samples.map((timings) => median(timings.map((t) => t.tokensPerSecond)));
  runs.forEach((run, i) => {
    const rate = rates[i]!;
    const { readFraction, entriesPerRead } = samples[i]![0]!;
    const shares =
      i >= BASELINES
        ? `${shareOf(samples, rates, i, 1)} | ${shareOf(samples, rates, i, 2)}`
        : ' | ';
    console.log(
      `| ${context.toLocaleString('en')} | ${schedule} | ${run.name} | ${rate.toFixed(1)} | ×${(rate / rates[0]!).toFixed(2)} | ${readFraction.toFixed(3)} | ${entriesPerRead.toFixed(0)} | ${shares} |`,
    );
  });
}

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  const model = DecoderModel.random(config, 1);
  console.log(
    `backend ${backend}; decode steps timed after a prefilled context (${CONTEXTS.map(([c, s]) => `${s} at ${c}`).join(', ')}), median of ${REPEATS} repeats, each run alone and the runs taking turns ${TURN} steps at a time; pages of ${PAGE}`,
  );
  console.log(
    "| context | schedule | run | decode tok/s | vs full | read / live | entries per read | share of StreamingLLM's speed-up, fixed capacity (range over repeats) | share of StreamingLLM's speed-up, a quarter of the context |",
  );
  console.log('|--:|---|---|--:|--:|--:|--:|--:|--:|');
  for (const [context, steps] of CONTEXTS) {
    const budget = context * KEEP;
    const streaming = new StreamingLLMPolicy({
      budget: { keepCount: budget },
      trigger: { whenLiveExceeds: budget, slack: SLACK },
    });
    const base = new KVCache({
      geometry: { layers: LAYERS, kvHeads: KV_HEADS, headDim: config.head_dim, pageSize: PAGE },
      queryHeads: config.num_attention_heads,
      anchors: streaming.anchors,
    });
    const rng = new Rng(context);
    const tokens = Int32Array.from(rng.uniform(context), (u) => Math.floor(u * config.vocab_size));
    for (let at = 0; at < context; at += PREFILL_CHUNK) {
      const out = model.prefill([base], [tokens.subarray(at, at + PREFILL_CHUNK)]);
      out.logits.dispose();
      out.hidden.dispose();
    }
    const keep: BatchControls = [Array.from({ length: LAYERS }, () => ({ tokenKeep: KEEP }))];
    const runs: Run[] = [
      { name: 'full cache' },
      { name: 'StreamingLLM 25%', eviction: streaming },
      {
        name: 'StreamingLLM, a quarter of the context',
        eviction: new StreamingShareOfContext(KEEP, SLACK),
      },
      { name: 'Quest κ = 0.25 (`tokenKeep`)', controls: () => keep },
      {
        name: 'Quest `QuestSelector` 25%',
        readSelector: new QuestSelector({ tokenBudget: budget, pageSize: PAGE, denseLayers: 0 }),
      },
      {
        name: 'random pages, as many (`readPages`)',
        controls: randomPages(context, steps, rng, true),
      },
      {
        name: 'random pages drawn once (`readPages`)',
        controls: randomPages(context, steps, rng, false),
      },
      {
        name: 'sink and newest pages (`readPages`)',
        controls: newestPages(context),
      },
    ];
    timeRuns(model, base, runs, TURN, TURN, rng); // warm-up
    const schedules = [
      { name: 'alone', turn: steps },
      { name: `turns of ${TURN}`, turn: TURN },
    ];
    const samples = schedules.map(() => runs.map(() => [] as Timing[]));
    for (let r = 0; r < REPEATS; r++) {
      schedules.forEach(({ turn }, k) => {
        timeRuns(model, base, runs, steps, turn, rng).forEach((timing, i) => {
          samples[k]![i]!.push(timing);
        });
      });
    }
    schedules.forEach(({ name }, k) => report(context, name, runs, samples[k]!));
  }
}

await main();

// GSA's decode cost at a fixed budget B against the full cache, and the gate's share of a decode
// step (issue 14, item 5). A random model (weights do not affect speed) reads a 1,024-token
// prompt of random ids, then decodes STEPS tokens greedily. Each budget B is timed three ways,
// all with the same live size (B − 1 cached entries per KV head in every decode step):
//
//   * B, no gate        the budgeted cache `gsaProvider.build` makes for `{ capacity: B }` (sinks
//                       4, window 32, a round whenever a KV head exceeds B − 1 entries) ranked by
//                       a policy without a gate: each entry's score is a hash of its layer, head
//                       and position. No gate network, no stored gates, no log g in the logits:
//                       what any budgeted scorer costs.
//   * GSA B, free gate  `GsaPolicy` with the same budget and a gate without a network: log g of
//                       uniform draws made up front, a slice per call (one op per layer). The
//                       caches store gates and every step uploads and adds log g, as GSA's do.
//   * GSA B             the policy `gsaProvider.build` makes, with a gate from
//                       `initGateParameters` (Linear(D, D) → SiLU → Linear(D, H_kv) → σ).
//
// and the full cache (no policy; 1,024 to 1,024 + STEPS − 1 cached entries per KV head).
//
// The three budgeted variants give every token an arbitrary utility fixed when it is written, so
// their rounds evict the same kind of entries. That matters a little: a round compacts the cache
// by moving every kept entry behind the evicted one (`entries moved / step`). A constant gate
// (ties go to the older entry) always evicts the entry just leaving the window, 32 moves per KV
// head and round; the random-weight gate mostly does too, but now and then evicts an older entry.
//
// The gate network's share of a GSA step is (GSA B − free gate) / GSA B: same cache, same rounds,
// same bias path, only the network differs. The gating machinery's (storing g, uploading and
// adding log g of every cached entry) is (free gate − no gate) / GSA B. As a cross-check the gate
// is also timed alone: `GsaGate.logGates` on a [1, 1, D] input in every layer, as a decode step
// calls it (the wasm backend runs ops eagerly, so the loop times the work), with its weights hot
// in the CPU caches, which they need not be inside a step.
//
// The dev machine has 2 cores and the other is busy, so the load changes under a run. Hence the
// variants run side by side, interleaved step by step: one `GenerationSession` per variant, each
// prefilled, then decode step s of every variant in turn (the order rotating every step), so a
// change of load hits all of them alike. Each step (`session.step`: the model step and the
// eviction rounds it triggers) is timed in wall time and in process CPU time (user + system,
// which does not count waiting for a core). tokens/s is 1000 / the mean wall ms per step; the
// shares are medians over all steps of the CPU-time difference between the two variants' step s.
// Every ratio comes from this one run. Backend wasm (one thread in Node).
//
//   npm run bench:cost        (from packages/policies-gsa, after a build; REPEATS=1 for a quick look)
import type { AttentionGate, EvictionPolicy, LayerObservation } from '@lethe/kv-cache';
import { NO_NEEDS, ScorerPolicy } from '@lethe/kv-cache';
import { DecoderModel, defaultConfig, GenerationSession, policyContextOf } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { GsaGate } from '../src/gate/gsa-gate';
import { initGateParameters } from '../src/gate/init-gate-parameters';
import { GsaPolicy } from '../src/policy/gsa-policy';
import { gsaProvider } from '../src/policy/gsa-provider';

const PROMPT = 1024;
/** Decode steps after the prompt. */
const STEPS = 256;
/** Prefill-and-decode rounds of the wider model (the task models, whose steps are short, get 2 ×). */
const REPEATS = Number(process.env.REPEATS ?? 3);
const BUDGETS = [128, 256];
const OPTIONS = { sinks: 4, window: 32 };
/** Iterations of the standalone gate timing. */
const GATE_LOOPS = 2000;

const shape = (hidden: number, layers: number, heads: number, intermediate: number) =>
  defaultConfig({
    model_type: 'llama',
    vocab_size: 45,
    hidden_size: hidden,
    intermediate_size: intermediate,
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: 2,
    max_position_embeddings: 4096,
    tie_word_embeddings: true,
  });

/** Model shapes and the repeats of each. */
const MODELS: [string, ReturnType<typeof defaultConfig>, number][] = [
  ['task models (hidden 64, 2 layers, 4/2 heads)', shape(64, 2, 4, 128), 2 * REPEATS],
  ['wider (hidden 512, 4 layers, 8/2 heads)', shape(512, 4, 8, 1408), REPEATS],
];

/**
 * A gate without a network: log g of uniform draws made once, up front, and handed out a slice
 * per call (one op per layer, like a zeros tensor). Like the random-weight gate's, the values are
 * arbitrary but fixed per token, so a round evicts the same kind of entries and the cache
 * compacts as much.
 */
class FreeGate implements AttentionGate<tf.Tensor> {
  readonly name = 'free';
  private static readonly TABLE = 8192;
  private readonly table: tf.Tensor3D;
  private next = 0;
  constructor(private readonly kvHeads: number) {
    this.table = tf.keep(
      tf.tidy(() => tf.log(tf.randomUniform([1, kvHeads, FreeGate.TABLE], 1e-6, 1, 'float32', 5))),
    );
  }
  logGates(_layer: number, attentionInput: tf.Tensor): tf.Tensor {
    const [batch, tokens] = attentionInput.shape as [number, number, number];
    if (batch !== 1 || tokens > FreeGate.TABLE) throw new Error('FreeGate serves one sequence');
    if (this.next + tokens > FreeGate.TABLE) this.next = 0;
    const logG = tf.slice(this.table, [0, 0, this.next], [1, this.kvHeads, tokens]);
    this.next += tokens;
    return logG;
  }
  dispose(): void {
    this.table.dispose();
  }
}

/** A uniform number in (0, 1) fixed by (layer, KV head, position): a utility drawn once per token. */
function hashUniform(layer: number, head: number, position: number): number {
  let h = Math.imul(position + 1, 0x9e3779b1) ^ Math.imul(layer * 64 + head + 1, 0x85ebca6b);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return ((h >>> 0) + 0.5) / 4294967296;
}

/**
 * The budgeted cache without a gate: each entry scores a utility fixed by its layer, head and
 * position, as arbitrary as the free gate's, so the rounds evict the same kind of entries.
 */
class Ungated extends ScorerPolicy {
  readonly name = 'ungated';
  readonly needs = NO_NEEDS;
  score({ layer, kvHeads, maxLive, liveCounts, positions }: LayerObservation): Float32Array {
    const scores = new Float32Array(kvHeads * maxLive);
    for (let h = 0; h < kvHeads; h++) {
      for (let i = 0; i < liveCounts[h]!; i++) {
        scores[h * maxLive + i] = hashUniform(layer, h, positions[h * maxLive + i]!);
      }
    }
    return scores;
  }
}

interface Variant {
  readonly name: string;
  readonly eviction?: EvictionPolicy;
  /** Entries per KV head a round leaves (undefined: the full cache). */
  readonly kept?: number;
}

/** Every timed step of a variant, ms, in the order run (repeat by repeat). */
interface Timings {
  readonly wall: number[];
  readonly cpu: number[];
  /** Entries the decode rounds moved to compact the cache (all layers and KV heads). */
  moved: number;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)} %`;
const cpuMs = (since?: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
};
const argmax = (xs: Float32Array) => xs.reduce((best, x, i) => (x > xs[best]! ? i : best), 0);

/**
 * One prefill per variant, then STEPS greedy decode steps of every variant interleaved, each
 * timed; checks every cache ends with the live size it should.
 */
async function interleaved(
  model: DecoderModel,
  prompt: Int32Array,
  steps: number,
  variants: readonly Variant[],
  timings: Timings[] | undefined,
): Promise<void> {
  const lanes: { session: GenerationSession; token: number }[] = [];
  for (const [v, variant] of variants.entries()) {
    const session = new GenerationSession({
      model,
      ...(variant.eviction === undefined ? {} : { eviction: variant.eviction }),
      // A kept entry moves when an entry before it went.
      onEvictionRound: ({ step, decision }) => {
        if (timings === undefined || step <= prompt.length || decision.granularity !== 'head')
          return;
        let moved = 0;
        for (const keep of decision.keep)
          for (let i = 0; i < keep.length; i++) moved += +(keep[i] !== i);
        timings[v]!.moved += moved;
      },
    });
    const out = await session.prefill([prompt]);
    lanes.push({ session, token: argmax(out.logits[0]!) });
  }
  for (let s = 0; s < steps; s++) {
    for (let i = 0; i < lanes.length; i++) {
      const v = (i + s) % lanes.length;
      const lane = lanes[v]!;
      const cpu0 = process.cpuUsage();
      const wall0 = performance.now();
      const out = await lane.session.step([0], Int32Array.of(lane.token));
      const wall = performance.now() - wall0;
      const cpu = cpuMs(cpu0);
      lane.token = argmax(out.logits[0]!);
      const timing = timings?.[v];
      timing?.wall.push(wall);
      timing?.cpu.push(cpu);
    }
  }
  for (const [v, variant] of variants.entries()) {
    const stats = lanes[v]!.session.caches[0]!.stats();
    const live = Math.max(...stats.livePerHead);
    const expected = variant.kept ?? prompt.length + steps;
    if (live !== expected)
      throw new Error(`${variant.name} ends with ${live} live, not ${expected}`);
    if (variant.kept !== undefined && stats.evictionRounds[0]! <= steps) {
      throw new Error(`${variant.name} ran ${stats.evictionRounds[0]} rounds in ${steps} steps`);
    }
  }
}

/**
 * CPU ms of `gate.logGates` on a [1, 1, D] input in every layer, one decode step's gate work:
 * the median of 20 batches of GATE_LOOPS / 20.
 */
function gateAlone(gate: GsaGate, hidden: number, layers: number): number {
  const x = tf.keep(tf.randomNormal([1, 1, hidden], 0, 1, 'float32', 3));
  const once = () =>
    tf.tidy(() => {
      for (let l = 0; l < layers; l++) gate.logGates(l, x);
    });
  for (let i = 0; i < 100; i++) once(); // warm-up
  const batches: number[] = [];
  for (let b = 0; b < 20; b++) {
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < GATE_LOOPS / 20; i++) once();
    batches.push(cpuMs(cpu0) / (GATE_LOOPS / 20));
  }
  x.dispose();
  return median(batches);
}

async function benchModel(
  label: string,
  config: ReturnType<typeof defaultConfig>,
  repeats: number,
) {
  const tensorsBefore = tf.memory().numTensors;
  const model = DecoderModel.random(config, 1);
  const layers = config.num_hidden_layers;
  const kvHeads = config.num_key_value_heads;
  const hidden = config.hidden_size;
  const parameters = initGateParameters({ layers, hiddenSize: hidden, kvHeads }, 'head');
  const gate = new GsaGate(parameters);
  const context = policyContextOf(model, 1);
  const variants: Variant[] = [{ name: 'full cache' }];
  const frees: FreeGate[] = [];
  for (const capacity of BUDGETS) {
    const gsa = gsaProvider.build({
      budget: { capacity },
      options: OPTIONS,
      context,
      parameters: { parameters, gate },
    }).eviction as GsaPolicy;
    const same = { budget: gsa.budget, trigger: gsa.trigger, anchors: gsa.anchors };
    const free = new FreeGate(kvHeads);
    frees.push(free);
    const kept = capacity - 1;
    variants.push(
      { name: `B ${capacity}, no gate`, eviction: new Ungated(same), kept },
      {
        name: `GSA B ${capacity}, free gate`,
        // GsaPolicy only carries the gate for the runtime, which calls nothing but logGates.
        eviction: new GsaPolicy({ ...same, gate: free as unknown as GsaGate }),
        kept,
      },
      { name: `GSA B ${capacity}`, eviction: gsa, kept },
    );
  }
  let seed = 12345;
  const prompt = Int32Array.from({ length: PROMPT }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % config.vocab_size;
  });

  // Warm-up: every variant's code path, untimed, on a shorter run.
  await interleaved(model, prompt.subarray(0, PROMPT / 2), 32, variants, undefined);
  const timings: Timings[] = variants.map(() => ({ wall: [], cpu: [], moved: 0 }));
  for (let r = 0; r < repeats; r++) await interleaved(model, prompt, STEPS, variants, timings);
  const gateCpu = gateAlone(gate, hidden, layers);

  const wall = timings.map((t) => mean(t.wall));
  const cpu = timings.map((t) => median(t.cpu));
  const steps = timings[0]!.wall.length;
  console.log(
    `\n${label}: ${repeats} × ${STEPS} decode steps per variant (full cache: ${PROMPT}–${PROMPT + STEPS - 1} cached entries per KV head)`,
  );
  console.log(
    '| variant | wall ms / step (mean) | tokens/s | × full cache | CPU ms / step (median) | × full cache (CPU) | entries moved / step |',
  );
  console.log('|---|--:|--:|--:|--:|--:|--:|');
  variants.forEach((variant, v) => {
    console.log(
      `| ${variant.name} | ${wall[v]!.toFixed(3)} | ${(1000 / wall[v]!).toFixed(1)} | ×${(wall[0]! / wall[v]!).toFixed(2)} | ${cpu[v]!.toFixed(3)} | ×${(cpu[0]! / cpu[v]!).toFixed(2)} | ${(timings[v]!.moved / steps).toFixed(0)} |`,
    );
  });
  /** Median over the steps of the CPU ms difference between two variants' same step. */
  const paired = (v: number, w: number) =>
    median(timings[v]!.cpu.map((ms, s) => ms - timings[w]!.cpu[s]!));
  console.log(
    '\n| B | gate network: GSA − free gate | gating machinery: free gate − no gate | GSA − no gate | gate alone: logGates × layers |',
  );
  console.log('|--:|--:|--:|--:|--:|');
  BUDGETS.forEach((capacity, b) => {
    const [none, free, gsa] = [1 + 3 * b, 2 + 3 * b, 3 + 3 * b];
    const share = (d: number) => `${d.toFixed(3)} ms (${pct(d / cpu[gsa]!)})`;
    console.log(
      `| ${capacity} | ${share(paired(gsa, free))} | ${share(paired(free, none))} | ${share(paired(gsa, none))} | ${share(gateCpu)} |`,
    );
  });
  console.log(
    '(CPU ms per step, medians over the steps of the difference at the same step; percentages of the median GSA B step)',
  );

  gate.dispose();
  for (const free of frees) free.dispose();
  model.dispose();
  const leaked = tf.memory().numTensors - tensorsBefore;
  if (leaked !== 0) throw new Error(`${leaked} tensors left after ${label}`);
}

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  const threads =
    backend === 'wasm'
      ? ` (multithreading: ${tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT')})`
      : '';
  console.log(
    `backend ${backend}${threads}; prompt ${PROMPT} random ids, ${STEPS} greedy decode steps; B = ${BUDGETS.join(', ')} entries per KV head (sinks ${OPTIONS.sinks}, window ${OPTIONS.window}); variants interleaved step by step`,
  );
  for (const [label, config, repeats] of MODELS) await benchModel(label, config, repeats);
}

await main();

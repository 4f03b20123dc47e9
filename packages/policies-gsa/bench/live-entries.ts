// Live KV-cache entries over a long generation: the full cache against GSA at a budget of B = 128
// entries per KV head (sinks 4, window 32; the policy `gsaProvider.build` makes for
// `{ capacity: 128 }`). A random model of the task models' shape (hidden 64, 2 layers, 4/2 heads;
// weights and gate weights from `initGateParameters` do not change the counts) reads a
// 256-token prompt of random ids in chunks of 32, then generates 1,536 tokens greedily. The live
// entries of every (layer, KV head) are read from the cache before every prefill chunk and every
// decode step and at the end — that is, after each chunk's or step's eviction round — and drawn
// to `bench/live-entries.svg` (hand-written SVG), with a short table on stdout.
//
// With a capacity budget a GSA round runs as soon as a KV head holds more than B − 1 entries and
// leaves B − 1, so the next token fits: a decode step reads B − 1 cached entries plus its own, and
// the cache peaks at B right after an append. A prefill chunk of c tokens goes in whole before its
// round, so during the prompt the peak is B − 1 + c. The dashed line is that pre-round count.
//
//   npm run bench:live-entries        (from packages/policies-gsa, after a build)
import { writeFileSync } from 'node:fs';
import type { EvictionPolicy, KVCacheStore } from '@lethe/kv-cache';
import { DecoderModel, defaultConfig, generate, policyContextOf } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { GsaGate } from '../src/gate/gsa-gate';
import { initGateParameters } from '../src/gate/init-gate-parameters';
import { gsaProvider } from '../src/policy/gsa-provider';

const PROMPT = 256;
const GENERATE = 1536;
const CHUNK = 32;
const BUDGET = 128;
const OPTIONS = { sinks: 4, window: 32 };
const SVG = new URL('./live-entries.svg', import.meta.url);

const config = defaultConfig({
  model_type: 'llama',
  vocab_size: 45,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 4096,
  tie_word_embeddings: true,
});

/** Live entries after the rounds, when the cache had taken `tokens` tokens. */
interface Point {
  /** Tokens written so far (prompt and generated). */
  readonly tokens: number;
  /** Live entries per KV head, mean over every (layer, KV head). */
  readonly mean: number;
  /** Fewest and most live entries of any (layer, KV head). */
  readonly min: number;
  readonly max: number;
  /** The whole cache's live entries. */
  readonly total: number;
}

function pointOf(cache: KVCacheStore): Point {
  const counts: number[] = [];
  for (let l = 0; l < config.num_hidden_layers; l++) counts.push(...cache.liveCounts(l));
  const total = counts.reduce((a, b) => a + b, 0);
  return {
    tokens: cache.length(0),
    mean: total / counts.length,
    min: Math.min(...counts),
    max: Math.max(...counts),
    total,
  };
}

interface Series {
  readonly points: Point[];
  readonly peakTotal: number;
  /** Most entries the whole cache held during decoding (right after a step's append). */
  readonly decodePeak: number;
  readonly bytesLive: number;
  readonly rounds: number;
}

async function record(model: DecoderModel, prompt: Int32Array, eviction?: EvictionPolicy) {
  const points: Point[] = [];
  const r = await generate({
    model,
    prompts: [prompt],
    maxNewTokens: GENERATE,
    sampling: { temperature: 0 },
    prefillChunk: CHUNK,
    ...(eviction === undefined ? {} : { eviction }),
    onPrefillChunk: ({ caches }) => {
      points.push(pointOf(caches[0]!));
    },
    onStep: ({ caches }) => {
      points.push(pointOf(caches[0]!));
    },
  });
  points.push(pointOf(r.caches[0]!));
  const stats = r.stats.caches[0]!;
  const heads = config.num_hidden_layers * config.num_key_value_heads;
  // A decode step appends one entry to every (layer, KV head) before its round.
  const decodePeak = Math.max(
    ...points.flatMap((p, i) =>
      i > 0 && p.tokens > PROMPT
        ? [points[i - 1]!.total + heads * (p.tokens - points[i - 1]!.tokens)]
        : [],
    ),
  );
  return {
    points,
    peakTotal: stats.peakTotal,
    decodePeak,
    bytesLive: stats.bytesLive,
    rounds: stats.evictionRounds[0]!,
  } satisfies Series;
}

/** The count just before each point's round: the previous point's plus the tokens appended since. */
function beforeRounds(points: readonly Point[]): [number, number][] {
  return points.slice(1).map((p, i) => {
    const previous = points[i]!;
    return [p.tokens, previous.mean + (p.tokens - previous.tokens)];
  });
}

/** The points where a polyline turns: the others lie on the segment between their neighbours. */
function corners(xy: readonly [number, number][]): [number, number][] {
  return xy.filter((p, i) => {
    const [before, after] = [xy[i - 1], xy[i + 1]];
    if (before === undefined || after === undefined) return true;
    return (p[1] - before[1]) * (after[0] - p[0]) !== (after[1] - p[1]) * (p[0] - before[0]);
  });
}

function svg(full: Series, gsa: Series): string {
  const [width, height] = [760, 440];
  const [left, right, top, bottom] = [72, 24, 44, 56];
  const last = full.points.at(-1)!.tokens;
  const xMax = Math.ceil(last / 250) * 250;
  const yMax = Math.ceil(full.points.at(-1)!.mean / 250) * 250;
  const x = (t: number) => left + ((width - left - right) * t) / xMax;
  const y = (v: number) => height - bottom - ((height - top - bottom) * v) / yMax;
  const path = (xy: readonly [number, number][]) =>
    corners(xy)
      .map(([a, b], i) => `${i === 0 ? 'M' : 'L'}${x(a).toFixed(1)},${y(b).toFixed(1)}`)
      .join('');
  const line = (points: readonly Point[]) => path(points.map((p) => [p.tokens, p.mean]));
  const lines: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>Live KV-cache entries per KV head over ${PROMPT} prompt and ${GENERATE} generated tokens: the full cache grows linearly, GSA at B = ${BUDGET} stays flat</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">Live KV entries per head: full cache vs GSA at B = ${BUDGET}</text>`,
  ];
  for (let t = 0; t <= xMax; t += 250) {
    lines.push(
      `<line x1="${x(t)}" y1="${top}" x2="${x(t)}" y2="${height - bottom}" stroke="#eee"/>`,
      `<text x="${x(t)}" y="${height - bottom + 18}" text-anchor="middle">${t}</text>`,
    );
  }
  for (let v = 0; v <= yMax; v += 250) {
    lines.push(
      `<line x1="${left}" y1="${y(v)}" x2="${width - right}" y2="${y(v)}" stroke="#eee"/>`,
      `<text x="${left - 8}" y="${y(v) + 4}" text-anchor="end">${v}</text>`,
    );
  }
  lines.push(
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="black"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}" stroke="black"/>`,
    `<text x="${(left + width - right) / 2}" y="${height - 14}" text-anchor="middle">tokens written (prompt ${PROMPT} in chunks of ${CHUNK}, then ${GENERATE} generated)</text>`,
    `<text transform="translate(18 ${(top + height - bottom) / 2}) rotate(-90)" text-anchor="middle">live entries per KV head</text>`,
    `<line x1="${x(PROMPT)}" y1="${top}" x2="${x(PROMPT)}" y2="${height - bottom}" stroke="#999" stroke-dasharray="2 3"/>`,
    `<text x="${x(PROMPT) + 4}" y="${y(900)}" fill="#666">end of prompt</text>`,
    `<text x="${x(650)}" y="${y(BUDGET) - 8}" fill="#d62728">GSA: ${BUDGET - 1} live per KV head after each round, ${BUDGET} at the peak of a decode step</text>`,
    `<line x1="${left}" y1="${y(BUDGET)}" x2="${width - right}" y2="${y(BUDGET)}" stroke="#999" stroke-dasharray="6 4"/>`,
    `<path d="${path(beforeRounds(gsa.points))}" fill="none" stroke="#d62728" stroke-opacity="0.45" stroke-dasharray="3 2"/>`,
    `<path d="${line(full.points)}" fill="none" stroke="#1f77b4" stroke-width="2"/>`,
    `<path d="${line(gsa.points)}" fill="none" stroke="#d62728" stroke-width="2"/>`,
  );
  const legend: [string, string, string][] = [
    ['#1f77b4', '', 'full cache'],
    [
      '#d62728',
      '',
      `GSA, B = ${BUDGET} (sinks ${OPTIONS.sinks}, window ${OPTIONS.window}): after each round`,
    ],
    ['#d62728', '3 2', 'GSA just before each round (the peak)'],
    ['#999', '6 4', `B = ${BUDGET}`],
  ];
  legend.forEach(([color, dash, label], i) => {
    const ly = top + 14 + 18 * i;
    const lx = left + 16;
    if (i === 0) {
      lines.push(
        `<rect x="${lx - 8}" y="${ly - 11}" width="420" height="${18 * legend.length + 4}" fill="white" stroke="#ccc"/>`,
      );
    }
    lines.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 28}" y2="${ly}" stroke="${color}" stroke-width="2"${dash === '' ? '' : ` stroke-dasharray="${dash}"`}/>`,
      `<text x="${lx + 36}" y="${ly + 4}">${label}</text>`,
    );
  });
  lines.push('</svg>', '');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  const tensorsBefore = tf.memory().numTensors;
  const model = DecoderModel.random(config, 1);
  const shape = {
    layers: config.num_hidden_layers,
    hiddenSize: config.hidden_size,
    kvHeads: config.num_key_value_heads,
  };
  const parameters = initGateParameters(shape, 'head');
  const gate = new GsaGate(parameters);
  const { eviction } = gsaProvider.build({
    budget: { capacity: BUDGET },
    options: OPTIONS,
    context: policyContextOf(model, 1),
    parameters: { parameters, gate },
  });
  let seed = 4242;
  const prompt = Int32Array.from({ length: PROMPT }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % config.vocab_size;
  });

  const full = await record(model, prompt);
  const gsa = await record(model, prompt, eviction);
  gate.dispose();
  model.dispose();
  const leaked = tf.memory().numTensors - tensorsBefore;
  if (leaked !== 0) throw new Error(`${leaked} tensors left`);

  // Every decode step of GSA must leave B − 1 in every head once the cache has reached it.
  const decoded = gsa.points.filter((p) => p.tokens > PROMPT);
  const off = decoded.filter((p) => p.min !== BUDGET - 1 || p.max !== BUDGET - 1);
  if (off.length > 0)
    throw new Error(`GSA left ${off[0]!.min}–${off[0]!.max} live at ${off[0]!.tokens}`);

  writeFileSync(SVG, svg(full, gsa));
  const heads = config.num_hidden_layers * config.num_key_value_heads;
  console.log(
    `backend ${backend}; task-model shape, ${heads} (layer, KV head) pairs; prompt ${PROMPT} (chunks of ${CHUNK}), ${GENERATE} generated; GSA at B = ${BUDGET}, sinks ${OPTIONS.sinks}, window ${OPTIONS.window}`,
  );
  console.log('\n| tokens written | full cache, live per KV head | GSA B 128, live per KV head |');
  console.log('|--:|--:|--:|');
  const at = (series: Series, tokens: number) => series.points.find((p) => p.tokens === tokens)!;
  const marks = [CHUNK, 128, PROMPT, 512, 1024, 1536, full.points.at(-1)!.tokens];
  for (const tokens of marks) {
    const [f, g] = [at(full, tokens), at(gsa, tokens)];
    const range = (p: Point) => (p.min === p.max ? `${p.min}` : `${p.min}–${p.max}`);
    console.log(`| ${tokens} | ${range(f)} | ${range(g)} |`);
  }
  console.log('\n| | full cache | GSA B 128 |');
  console.log('|---|--:|--:|');
  console.log(
    `| live entries at the end (whole cache) | ${full.points.at(-1)!.total} | ${gsa.points.at(-1)!.total} |`,
  );
  console.log(
    `| peak entries (whole cache, after any append) | ${full.peakTotal} | ${gsa.peakTotal} |`,
  );
  console.log(`| peak entries while decoding | ${full.decodePeak} | ${gsa.decodePeak} |`);
  console.log(`| live bytes at the end | ${full.bytesLive} | ${gsa.bytesLive} |`);
  console.log(`| eviction rounds (layer 0) | ${full.rounds} | ${gsa.rounds} |`);
  console.log(`\nwrote ${SVG.pathname}`);
}

await main();

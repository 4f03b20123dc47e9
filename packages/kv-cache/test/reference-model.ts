import { keyAt, positionOf, queryAt } from './helpers';

/**
 * A deliberately naive model of the cache used as the oracle of the property tests: plain
 * arrays of live token indices per (layer, head), evictedAt per token, brute-force attention.
 */
export class ReferenceModel {
  readonly lengths: number[];
  /** `[layer][head]` sorted append indices of live tokens. */
  readonly live: number[][][];
  /** `[layer][head][token]` length at eviction, Infinity while live. */
  readonly evictedAt: number[][][];
  /** `[layer][head][token]` accumulated attention and count. */
  readonly attention: number[][][];
  readonly counts: number[][][];
  readonly peakPerLayer: number[];
  readonly rounds: number[];
  peakTotal = 0;

  constructor(
    readonly layers: number,
    readonly kvHeads: number,
    readonly queryHeads: number,
    readonly headDim: number,
    readonly sinks: number,
    readonly window: number,
  ) {
    const perHead = <T>(make: () => T) =>
      Array.from({ length: layers }, () => Array.from({ length: kvHeads }, make));
    this.lengths = new Array(layers).fill(0);
    this.live = perHead(() => []);
    this.evictedAt = perHead(() => []);
    this.attention = perHead(() => []);
    this.counts = perHead(() => []);
    this.peakPerLayer = new Array(layers).fill(0);
    this.rounds = new Array(layers).fill(0);
  }

  liveOfLayer(layer: number): number {
    return this.live[layer].reduce((sum, tokens) => sum + tokens.length, 0);
  }

  liveTotal(): number {
    let sum = 0;
    for (let l = 0; l < this.layers; l++) sum += this.liveOfLayer(l);
    return sum;
  }

  headsEqual(layer: number): boolean {
    const first = this.live[layer][0].join(',');
    return this.live[layer].every((tokens) => tokens.join(',') === first);
  }

  append(layer: number, count: number): void {
    for (let t = 0; t < count; t++) {
      const token = this.lengths[layer] + t;
      for (let h = 0; h < this.kvHeads; h++) {
        this.live[layer][h].push(token);
        this.evictedAt[layer][h][token] = Number.POSITIVE_INFINITY;
        this.attention[layer][h][token] = 0;
        this.counts[layer][h][token] = 0;
      }
    }
    this.lengths[layer] += count;
    this.peakPerLayer[layer] = Math.max(this.peakPerLayer[layer], this.liveOfLayer(layer));
    this.peakTotal = Math.max(this.peakTotal, this.liveTotal());
  }

  /** Brute-force causal softmax of query token `token`, query head `q`, over the live tokens of its KV head. */
  attentionRow(layer: number, token: number, q: number): Map<number, number> {
    const group = this.queryHeads / this.kvHeads;
    const head = Math.floor(q / group);
    const seen = this.live[layer][head].filter((j) => j <= token);
    const logits = seen.map((j) => {
      let dot = 0;
      for (let c = 0; c < this.headDim; c++)
        dot += queryAt(layer, token, q, c) * keyAt(layer, j, head, c);
      return dot / Math.sqrt(this.headDim);
    });
    const max = Math.max(...logits);
    const exps = logits.map((x) => Math.exp(x - max));
    const sum = exps.reduce((a, b) => a + b, 0);
    return new Map(seen.map((j, i) => [j, exps[i] / sum]));
  }

  /** Accumulates the attention of the queries of tokens `[from, from + count)`. */
  recordQueries(layer: number, from: number, count: number): void {
    const group = this.queryHeads / this.kvHeads;
    for (let token = from; token < from + count; token++) {
      for (let h = 0; h < this.kvHeads; h++) {
        for (const j of this.live[layer][h]) if (j <= token) this.counts[layer][h][j] += 1;
        for (let q = h * group; q < (h + 1) * group; q++) {
          for (const [j, p] of this.attentionRow(layer, token, q)) this.attention[layer][h][j] += p;
        }
      }
    }
  }

  /** Keeps the live entries at `indices` of (layer, head) plus anchors. */
  keep(layer: number, head: number, indices: Iterable<number>): void {
    const length = this.lengths[layer];
    const tokens = this.live[layer][head];
    const chosen = new Set(Array.from(indices, (i) => tokens[i]));
    for (const token of tokens)
      if (positionOf(token) < this.sinks || token >= length - this.window) chosen.add(token);
    for (const token of tokens) if (!chosen.has(token)) this.evictedAt[layer][head][token] = length;
    this.live[layer][head] = tokens.filter((token) => chosen.has(token));
  }
}

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** What a served model's engine reports for the gauges, read at every scrape. */
export interface EngineGauges {
  readonly queued: number;
  readonly active: number;
  readonly kvEntries: number;
  readonly evictions: number;
}

/** Seconds of history behind the `lethe_tokens_per_second` gauge. */
const RATE_WINDOW_SECONDS = 10;

/**
 * The server's Prometheus metrics (prom-client, its own registry): queue depth, active
 * sequences, KV-cache entries held and evictions per model (read from the engines at scrape
 * time), generated tokens and their rate over the last 10 s, requests by endpoint and status,
 * time to first token and inter-token latency, plus prom-client's process metrics (memory, event
 * loop lag).
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly tokens: Counter<'model'>;
  private readonly requests: Counter<'endpoint' | 'status'>;
  private readonly firstToken: Histogram<'model'>;
  private readonly interToken: Histogram<'model'>;
  /** Per model, tokens generated per whole second (`[second, count]`, oldest first) within the rate window. */
  private readonly recent = new Map<string, [number, number][]>();

  constructor(
    engines: () => ReadonlyMap<string, EngineGauges>,
    private readonly now: () => number = Date.now,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'lethe_process_' });
    const perModel = (name: string, help: string, read: (gauges: EngineGauges) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['model'],
        registers,
        collect() {
          for (const [model, gauges] of engines()) this.set({ model }, read(gauges));
        },
      });
    perModel('lethe_queue_depth', 'Requests waiting to join the decode batch', (g) => g.queued);
    perModel('lethe_active_sequences', 'Sequences in the running decode batch', (g) => g.active);
    perModel(
      'lethe_kv_entries',
      'KV-cache entries held by the running sequences',
      (g) => g.kvEntries,
    );
    perModel('lethe_evictions', 'KV-cache entries evicted since start-up', (g) => g.evictions);
    const recent = this.recent;
    const window = (model: string) => this.window(model);
    new Gauge({
      name: 'lethe_tokens_per_second',
      help: `Generated tokens per second over the last ${RATE_WINDOW_SECONDS} s`,
      labelNames: ['model'],
      registers,
      collect() {
        for (const model of recent.keys()) {
          const total = window(model).reduce((sum, [, count]) => sum + count, 0);
          this.set({ model }, total / RATE_WINDOW_SECONDS);
        }
      },
    });
    this.tokens = new Counter({
      name: 'lethe_generated_tokens_total',
      help: 'Tokens generated',
      labelNames: ['model'],
      registers,
    });
    this.requests = new Counter({
      name: 'lethe_requests_total',
      help: 'Requests answered, by endpoint and HTTP status',
      labelNames: ['endpoint', 'status'],
      registers,
    });
    const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
    this.firstToken = new Histogram({
      name: 'lethe_time_to_first_token_seconds',
      help: 'From a request’s arrival to its first generated token',
      labelNames: ['model'],
      buckets: latencyBuckets,
      registers,
    });
    this.interToken = new Histogram({
      name: 'lethe_inter_token_latency_seconds',
      help: 'Between consecutive generated tokens of one sequence',
      labelNames: ['model'],
      buckets: latencyBuckets,
      registers,
    });
  }

  /** Records one generated token of `model`; `sinceLast` is the wait since the sequence's previous token (or since arrival for the first). */
  token(model: string, sinceLast: number, first: boolean): void {
    this.tokens.inc({ model });
    (first ? this.firstToken : this.interToken).observe({ model }, sinceLast / 1000);
    const buckets = this.window(model);
    const second = Math.floor(this.now() / 1000);
    const last = buckets[buckets.length - 1];
    if (last !== undefined && last[0] === second) last[1] += 1;
    else buckets.push([second, 1]);
  }

  /** `model`'s per-second token counts, those older than the rate window dropped (at most one per second kept). */
  private window(model: string): [number, number][] {
    const since = Math.floor(this.now() / 1000) - RATE_WINDOW_SECONDS;
    const buckets = (this.recent.get(model) ?? []).filter(([second]) => second > since);
    this.recent.set(model, buckets);
    return buckets;
  }

  /** Records an answered request. */
  request(endpoint: string, status: number): void {
    this.requests.inc({ endpoint, status: String(status) });
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The exposition's content type. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

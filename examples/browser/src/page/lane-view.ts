import type { LaneResult, LaneStart, StepSnapshot } from '../worker/protocol';
import { LaneMemory } from './lane-memory';
import { drawHeatMap, drawScores, drawTokens } from './memory-view';
import { drawTimeline } from './timeline-view';

/** Formats a byte count (`12.3 KB`). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * One lane's results: its heading, the streamed answer, the prompt and output as tokens that
 * show whether the cache still holds them, the heat map per (layer, KV head), the timeline of
 * live entries, the figures, and a table of live entries per layer and KV head (the text
 * alternative of the heat map).
 */
export class LaneView {
  readonly root: HTMLElement;
  private readonly heading: HTMLElement;
  private readonly budgets: HTMLElement;
  private readonly answer: HTMLElement;
  private readonly fedPrompt: HTMLElement;
  private readonly tokens: HTMLElement;
  private readonly heatMap: HTMLCanvasElement;
  private readonly timeline: HTMLCanvasElement;
  private readonly scores: HTMLCanvasElement;
  private readonly scoresNote: HTMLElement;
  private readonly figures: HTMLElement;
  private readonly table: HTMLTableElement;
  private readonly error: HTMLElement;
  private memory: LaneMemory | undefined;
  private promptLength = 0;
  private frame = 0;

  constructor(readonly lane: number) {
    this.root = element('section', { class: 'lane', 'data-lane': String(lane) });
    this.heading = element('h3', {}, `Lane ${lane + 1}`);
    this.budgets = element('p', { class: 'budgets' });
    this.error = element('p', { class: 'error', role: 'alert', hidden: '' });
    this.answer = element('pre', {
      class: 'answer',
      'data-testid': 'answer',
      'aria-live': 'polite',
    });
    this.fedPrompt = element('pre', { class: 'fed-prompt', 'data-testid': 'fed-prompt' });
    this.tokens = element('p', {
      class: 'tokens',
      'data-testid': 'tokens',
      'aria-label': 'prompt and output, each token shown held, partly held or evicted',
    });
    this.heatMap = element('canvas', { class: 'heat-map', role: 'img', 'aria-label': 'heat map' });
    this.scores = element('canvas', { class: 'heat-map', role: 'img', 'aria-label': 'scores' });
    this.scoresNote = element('p', { class: 'scores-note', 'data-testid': 'scores-note' });
    this.timeline = element('canvas', {
      class: 'timeline',
      width: '440',
      height: '90',
      role: 'img',
      'aria-label': 'live entries per step',
    });
    this.figures = element('dl', { class: 'figures', 'data-testid': 'figures' });
    this.table = element('table', { class: 'live-table', 'data-testid': 'live-table' });
    const memory = element('div', { class: 'memory' });
    memory.append(
      element('h4', {}, 'Memory: rows are (layer, KV head), columns are positions'),
      this.heatMap,
      element(
        'h4',
        {},
        "The policy's last scores: each layer's latest round, by rank within its head",
      ),
      this.scores,
      this.scoresNote,
      element('h4', {}, 'Live entries as positions are fed (grey: the full cache)'),
      this.timeline,
    );
    const answerLabel = element('h4', {}, 'Answer');
    const tokensLabel = element('h4', {}, 'What the cache holds');
    const fed = element('details');
    fed.append(
      element('summary', {}, 'The prompt as fed (after a chat template or a policy’s tag)'),
      this.fedPrompt,
    );
    this.root.append(
      this.heading,
      this.budgets,
      this.error,
      answerLabel,
      this.answer,
      fed,
      tokensLabel,
      this.tokens,
      memory,
      this.figures,
      this.table,
    );
  }

  /** Clears the lane for a new generation. */
  reset(): void {
    this.memory = undefined;
    this.answer.textContent = '';
    this.fedPrompt.textContent = '';
    this.tokens.replaceChildren();
    this.figures.replaceChildren();
    this.table.replaceChildren();
    this.budgets.textContent = '';
    this.error.hidden = true;
    this.root.dataset.state = 'running';
    this.heatMap.getContext('2d')?.clearRect(0, 0, this.heatMap.width, this.heatMap.height);
    this.scores.getContext('2d')?.clearRect(0, 0, this.scores.width, this.scores.height);
    this.scoresNote.textContent = '';
    this.timeline.getContext('2d')?.clearRect(0, 0, this.timeline.width, this.timeline.height);
  }

  start(start: LaneStart): void {
    this.memory = new LaneMemory(start);
    this.promptLength = start.promptTokens;
    this.heading.textContent = `Lane ${this.lane + 1}: ${start.policy}`;
    this.fedPrompt.textContent = start.prompt;
    this.budgets.textContent = `${start.budgets.join('; ')} (full-cache length ${start.fullCacheLength})`;
  }

  text(piece: string): void {
    this.answer.textContent += piece;
  }

  step(snapshot: StepSnapshot): void {
    const memory = this.memory;
    if (memory === undefined) return;
    memory.apply(snapshot);
    if (this.frame === 0) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
    }
  }

  done(result: LaneResult): void {
    if (this.frame !== 0) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.draw();
    const rows: [string, string][] = [
      [
        'live / peak entries',
        `${result.livePerLayer.reduce((a, b) => a + b, 0)} / ${result.peakTotal}`,
      ],
      [
        'bytes held',
        `${formatBytes(result.bytesLive)} of ${formatBytes(result.bytesFull)} for the full cache`,
      ],
      [
        'budget realised',
        `${(100 * result.realisedBudget).toFixed(1)} % (peak over the full cache)`,
      ],
      ['decode read', `${result.reads.entries} of ${result.reads.live} held entries`],
      ['eviction rounds', String(result.evictionRounds)],
      ['tokens', `${result.tokens} (${result.finishReason})`],
      ['time to first token', `${result.firstTokenMs.toFixed(0)} ms`],
      ['tokens/s', `${result.tokensPerSecond.toFixed(1)} on ${result.backend}`],
      ['cache', result.cache],
    ];
    if (result.verdict !== undefined) {
      rows.push([
        'verdict',
        result.verdict.correct
          ? 'correct'
          : `wrong${result.verdict.reason ? `: ${result.verdict.reason}` : ''}`,
      ]);
    }
    this.figures.replaceChildren(
      ...rows.flatMap(([term, value]) => [
        element('dt', {}, term),
        element('dd', { 'data-figure': term }, value),
      ]),
    );
    this.root.dataset.state = 'done';
    this.root.dataset.verdict =
      result.verdict === undefined ? 'none' : result.verdict.correct ? 'correct' : 'wrong';
  }

  fail(message: string): void {
    this.error.textContent = message;
    this.error.hidden = false;
    this.root.dataset.state = 'failed';
  }

  private draw(): void {
    const memory = this.memory;
    if (memory === undefined) return;
    drawHeatMap(this.heatMap, memory);
    drawTimeline(this.timeline, memory);
    this.scoresNote.textContent = drawScores(this.scores, memory)
      ? scoresText(memory)
      : 'no scored eviction round yet (Quest, SOL, NGC and random give no per-entry scores)';
    drawTokens(this.tokens, memory, this.promptLength);
    this.heatMap.setAttribute(
      'aria-label',
      `heat map of ${memory.rows} (layer, KV head) rows over ${memory.glyphs.length} positions; live entries are in the table below`,
    );
    this.drawTable(memory);
  }

  /** Live entries per layer (rows) and KV head (columns), and per layer in total. */
  private drawTable(memory: LaneMemory): void {
    const { layers, kvHeads } = memory.start;
    const caption = element(
      'caption',
      {},
      `Live entries per layer and KV head at step ${memory.step} (${memory.glyphs.length} positions fed)`,
    );
    const head = element('tr');
    head.append(element('th', { scope: 'col' }, 'layer'));
    for (let h = 0; h < kvHeads; h++) head.append(element('th', { scope: 'col' }, `head ${h}`));
    head.append(element('th', { scope: 'col' }, 'layer total'));
    const body = Array.from({ length: layers }, (_, layer) => {
      const row = element('tr');
      row.append(element('th', { scope: 'row' }, `L${layer}`));
      let total = 0;
      for (let h = 0; h < kvHeads; h++) {
        const live = memory.live[layer * kvHeads + h]!;
        total += live;
        row.append(
          element('td', { 'data-layer': String(layer), 'data-head': String(h) }, String(live)),
        );
      }
      row.append(element('td', { 'data-layer-total': String(layer) }, String(total)));
      return row;
    });
    this.table.replaceChildren(caption, element('thead'), element('tbody'));
    this.table.tHead!.append(head);
    this.table.tBodies[0]!.append(...body);
  }
}

/**
 * The text alternative of the scores: for each layer's latest round, the positions each head
 * scored highest (their glyphs too).
 */
function scoresText(memory: LaneMemory): string {
  const top = 5;
  return [...memory.lastRounds.values()]
    .sort((a, b) => a.layer - b.layer)
    .map((round) => {
      const heads = round.heads.map((head, h) => {
        const best = head.positions
          .map((position, i) => ({ position, score: head.scores[i]! }))
          .sort((a, b) => b.score - a.score)
          .slice(0, top)
          .map(({ position }) => `${position} ${JSON.stringify(memory.glyphs[position] ?? '')}`);
        return `head ${h}: ${best.join(', ')}`;
      });
      return `L${round.layer} (step ${round.step}) highest scored — ${heads.join('; ')}`;
    })
    .join('. ');
}

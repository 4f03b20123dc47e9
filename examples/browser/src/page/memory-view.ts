import type { LaneMemory } from './lane-memory';

/** Steps over which an evicted token fades from "just went" to "long gone". */
const FADE_STEPS = 24;

/** How strongly an entry evicted at `at` still shows at `step`: 1 just gone, 0 long gone. */
function freshness(at: number, step: number): number {
  return Math.max(0, 1 - (step - at) / FADE_STEPS);
}

/** Pixels per position of the memory canvases, and per row. */
function cellWidth(positions: number): number {
  return Math.max(2, Math.min(8, Math.floor(880 / Math.max(1, positions))));
}
const ROW_HEIGHT = 10;

/**
 * Draws the scores of each layer's latest eviction round on `canvas`, one row per (layer, KV
 * head) as the heat map: each scored position shaded by its rank within its head (dark green:
 * most worth keeping), unscored positions blank. Returns whether there was anything to draw (a
 * policy that scores no entries — Quest, SOL, NGC's blocks, random's draws aside — gives none).
 */
export function drawScores(canvas: HTMLCanvasElement, memory: LaneMemory): boolean {
  const positions = memory.glyphs.length;
  const cell = cellWidth(positions);
  canvas.width = Math.max(1, positions * cell);
  canvas.height = memory.rows * ROW_HEIGHT;
  const context = canvas.getContext('2d');
  if (context === null) return false;
  context.clearRect(0, 0, canvas.width, canvas.height);
  const kvHeads = memory.start.kvHeads;
  for (const round of memory.lastRounds.values()) {
    round.heads.forEach((head, h) => {
      const order = head.scores.map((_, i) => i).sort((a, b) => head.scores[a]! - head.scores[b]!);
      const rank = new Float32Array(order.length);
      order.forEach((i, r) => {
        rank[i] = order.length > 1 ? r / (order.length - 1) : 1;
      });
      const row = round.layer * kvHeads + h;
      head.positions.forEach((position, i) => {
        const shade = rank[i]!;
        context.fillStyle = `rgb(${Math.round(230 - 210 * shade)}, ${Math.round(245 - 125 * shade)}, ${Math.round(230 - 190 * shade)})`;
        context.fillRect(
          position * cell,
          row * ROW_HEIGHT + 1,
          cell - (cell > 3 ? 1 : 0),
          ROW_HEIGHT - 2,
        );
      });
    });
  }
  return memory.lastRounds.size > 0;
}

/**
 * Draws `memory` as a heat map on `canvas`: one row per (layer, KV head), one column per
 * position; a held entry is blue, an evicted one red at the step it went, fading to grey.
 */
export function drawHeatMap(canvas: HTMLCanvasElement, memory: LaneMemory): void {
  const positions = memory.glyphs.length;
  const cell = cellWidth(positions);
  const rowHeight = ROW_HEIGHT;
  canvas.width = Math.max(1, positions * cell);
  canvas.height = memory.rows * rowHeight;
  const context = canvas.getContext('2d');
  if (context === null) return;
  context.clearRect(0, 0, canvas.width, canvas.height);
  memory.evictedAt.forEach((row, r) => {
    row.forEach((at, position) => {
      if (at === -1) {
        context.fillStyle = '#2563eb';
      } else {
        const fresh = freshness(at, memory.step);
        context.fillStyle = `rgb(${Math.round(203 + 17 * fresh)}, ${Math.round(213 - 175 * fresh)}, ${Math.round(225 - 187 * fresh)})`;
      }
      context.fillRect(
        position * cell,
        r * rowHeight + 1,
        cell - (cell > 3 ? 1 : 0),
        rowHeight - 2,
      );
    });
  });
}

/**
 * Shows the text of `memory`'s positions in `container`, one span per token: held by every
 * (layer, KV head) row, by some of them, or by none — then fading from the step it went.
 * Spans are added as positions arrive and restyled on every call.
 */
export function drawTokens(container: HTMLElement, memory: LaneMemory, promptLength: number): void {
  while (container.children.length < memory.glyphs.length) {
    const position = container.children.length;
    const span = document.createElement('span');
    span.textContent = memory.glyphs[position]!;
    span.dataset.position = String(position);
    if (position >= promptLength) span.classList.add('generated');
    container.append(span);
  }
  for (let position = 0; position < memory.glyphs.length; position++) {
    const span = container.children[position] as HTMLElement;
    const holders = memory.holders(position);
    const state = holders === memory.rows ? 'held' : holders > 0 ? 'partly' : 'evicted';
    if (span.dataset.state !== state) {
      span.dataset.state = state;
      span.className = `${position >= promptLength ? 'generated ' : ''}${state}`;
    }
    if (state === 'evicted') {
      const at = memory.goneAt(position);
      span.style.opacity = (0.35 + 0.65 * freshness(at, memory.step)).toFixed(2);
      span.title = `evicted at step ${at}`;
    } else {
      span.style.opacity = '';
      span.title = `held by ${holders} of ${memory.rows} (layer, KV head) rows`;
    }
  }
}

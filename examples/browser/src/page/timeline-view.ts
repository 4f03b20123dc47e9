import type { LaneMemory } from './lane-memory';

/**
 * Draws the live entries of the whole cache against the positions fed, one point per step from
 * an empty cache, on `canvas` (blue), under what the full cache would hold (grey: every position
 * fed, for every layer and KV head).
 */
export function drawTimeline(canvas: HTMLCanvasElement, memory: LaneMemory): void {
  const context = canvas.getContext('2d');
  if (context === null) return;
  const { width, height } = canvas;
  context.clearRect(0, 0, width, height);
  const steps = memory.liveByStep.length;
  if (steps === 0) return;
  const fed = memory.glyphs.length;
  const top = Math.max(1, fed * memory.rows, ...memory.liveByStep);
  const x = (step: number) => (memory.positionsByStep[step]! / Math.max(1, fed)) * (width - 2) + 1;
  const y = (live: number) => height - 2 - (live / top) * (height - 4);
  context.lineWidth = 2;
  context.strokeStyle = '#9ca3af';
  context.beginPath();
  context.moveTo(1, y(0));
  context.lineTo(x(steps - 1), y(fed * memory.rows));
  context.stroke();
  context.strokeStyle = '#2563eb';
  context.beginPath();
  context.moveTo(1, y(0));
  memory.liveByStep.forEach((live, step) => {
    context.lineTo(x(step), y(live));
  });
  context.stroke();
}

import { escapeHtml } from './escape';
import { glyphSvg } from './markers';
import type { LegendEntry } from './plots';

/**
 * The legend a task's plots share, as an HTML list: per entry a small inline `<svg>` glyph
 * (line, dash and marker of the series) and its label; the full cache's says its band is its
 * 95% interval.
 */
export function renderLegend(entries: readonly LegendEntry[]): string {
  const items = entries.map(
    (entry) =>
      `<li class="legend-item" data-series="${escapeHtml(entry.key)}">` +
      `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="14" viewBox="0 0 32 14" aria-hidden="true">${glyphSvg(entry.style, 2, 7)}</svg>` +
      `${escapeHtml(entry.label)}${entry.reference ? ' <span class="aside">(band: 95% CI)</span>' : ''}</li>`,
  );
  return `<ul class="legend" aria-label="Policies">${items.join('')}</ul>`;
}

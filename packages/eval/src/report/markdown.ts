import type { SweepResults } from '../harness/results';
import { escapeMarkdown, markdownCode } from './escape';
import { reportRows } from './rows';
import { COMMAND_HEADER, summaryLine, TABLE_COLUMNS } from './table';

/**
 * A Markdown (GFM) report of a sweep: a heading, a summary line and the results table with one
 * row per (task, policy, budget) — seeds pooled — and the columns budget, realised budget,
 * seeds, accuracy ± SE, perplexity ± SE, peak KV reduction (NGC eq. 7), net keep-rate (SOL),
 * mean / peak live KV entries, tokens/s and the commands that reproduce the row as code spans.
 * Every name and command is escaped, so the Markdown renders no HTML or links from the data.
 *
 * @throws LetheError `E_FORMAT` for malformed results (see `reportRows`).
 */
export function renderMarkdown(results: SweepResults): string {
  const rows = reportRows(results);
  const headers = [...TABLE_COLUMNS.map((column) => column.header), COMMAND_HEADER];
  const rule = [...TABLE_COLUMNS.map((column) => (column.numeric ? '--:' : '---')), '---'];
  const lines = [
    '# Lethe evaluation report',
    '',
    escapeMarkdown(summaryLine(results, rows)),
    '',
    tableLine(headers),
    tableLine(rule),
    ...rows.map((row) =>
      tableLine([
        ...TABLE_COLUMNS.map((column) => escapeMarkdown(column.cell(row))),
        row.commands.map(markdownCode).join('<br>'),
      ]),
    ),
  ];
  return `${lines.join('\n')}\n`;
}

function tableLine(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

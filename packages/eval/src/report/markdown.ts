import type { SweepResults } from '../harness/results';
import { BASELINE_HEADER, BASELINE_NUMERIC, baselineCaption, baselineRows } from './baseline-table';
import type { BaselineComparison } from './best-heuristic';
import { compactTable, compactTableCaption, identicalNote } from './compact-table';
import { escapeMarkdown, markdownCode } from './escape';
import { formatBudget, formatInterval, formatScore, MISSING } from './format';
import { reportRows } from './rows';
import { rowsWithAverage } from './suite-average';
import { summaryParagraphs } from './summary';
import { COMMAND_HEADER, TABLE_COLUMNS } from './table';
import { type ScoreView, scoreViews } from './views';

/** Options of {@link renderMarkdown} and `renderHtml`. */
export interface ReportOptions {
  /**
   * Each policy against the best heuristic (`compareToBestHeuristic`): shown per task, after its
   * score tables. Absent: no such section.
   */
  readonly comparisons?: readonly BaselineComparison[];
  /** The family-wise error rate the comparisons were judged at (default 0.05), for the caption. */
  readonly alpha?: number;
  /**
   * Labels of the compute policies and read selectors (SOL's, Quest), plotted against their net
   * keep-rate on a plot of their own (`reportPlots`; the HTML report) and left out of a score
   * table's realised-budget range (`compactTable`) — e.g.
   * `leaderboardRoles(config, registry).compute`.
   */
  readonly computePolicies?: readonly string[];
  /**
   * Task labels whose accuracy the report averages (`suiteAverageRows`), shown first as a task of
   * its own, `average of N tasks`, with its plots and table — a suite's score per budget. Absent:
   * no average.
   */
  readonly averageOver?: readonly string[];
}

/**
 * A Markdown (GFM) report of a sweep, in the order of the HTML report without its plots: a
 * heading and the summary (what was swept, the budget rule, how intervals are computed); per
 * task a section with, per score, the policy × budget table (score with its 95% confidence
 * interval, the best at each budget in bold, the full cache above it) and a note naming
 * policies with identical results, then, given `options.comparisons`, each policy against the
 * best heuristic (paired tests, Holm-adjusted, a verdict mark) — given `options.averageOver`, the
 * suite average comes first as a task of its own; then "All rows": one row per (task, policy, budget) — seeds
 * pooled — with the columns budget, realised budget, examples (seeds), accuracy and perplexity
 * (95% CI), peak KV reduction (NGC eq. 7), net keep-rate (SOL), mean / peak live KV entries,
 * tokens/s and the commands that reproduce the row as code spans. Every name and command is
 * escaped, so the Markdown renders no HTML or links from the data.
 *
 * @throws LetheError `E_FORMAT` for malformed results (see `reportRows`).
 */
export function renderMarkdown(results: SweepResults, options: ReportOptions = {}): string {
  const rows = reportRows(results);
  const { shown, paragraph } = rowsWithAverage(rows, options.averageOver);
  const views = scoreViews(shown);
  const tasks = [...new Set(views.map((view) => view.task))];
  const lines = ['# Lethe evaluation report', ''];
  for (const text of [...summaryParagraphs(results, rows), paragraph].filter((t) => t !== '')) {
    lines.push(escapeMarkdown(text), '');
  }
  for (const task of tasks) {
    lines.push(`## ${escapeMarkdown(task)}`, '');
    for (const view of views.filter((candidate) => candidate.task === task)) {
      lines.push(...compactLines(view, options.comparisons ?? [], options.computePolicies), '');
    }
    const own = (options.comparisons ?? []).filter((c) => c.task === task);
    if (own.length > 0) lines.push(...baselineLines(own, options.alpha ?? 0.05), '');
  }
  lines.push('## All rows', '');
  lines.push(tableLine([...TABLE_COLUMNS.map((column) => column.header), COMMAND_HEADER]));
  lines.push(
    tableLine([...TABLE_COLUMNS.map((column) => (column.numeric ? '--:' : '---')), '---']),
  );
  for (const row of rows) {
    lines.push(
      tableLine([
        ...TABLE_COLUMNS.map((column) => escapeMarkdown(column.cell(row))),
        row.commands.map(markdownCode).join('<br>'),
      ]),
    );
  }
  return `${lines.join('\n')}\n`;
}

function compactLines(
  view: ScoreView,
  comparisons: readonly BaselineComparison[],
  computePolicies: readonly string[] = [],
): string[] {
  const table = compactTable(view, comparisons, computePolicies);
  const note = identicalNote(view);
  const header = table.budgets.map((budget, i) =>
    table.realised[i] === ''
      ? formatBudget(budget)
      : `${formatBudget(budget)} (realised ${table.realised[i]})`,
  );
  return [
    escapeMarkdown(compactTableCaption(view, table)),
    '',
    tableLine(['policy', ...header.map(escapeMarkdown)]),
    tableLine(['---', ...table.budgets.map(() => '--:')]),
    ...table.rows.map((row) =>
      tableLine([
        escapeMarkdown(row.label),
        ...row.cells.map((cell) => {
          if (cell === undefined) return MISSING;
          const score = escapeMarkdown(formatScore(cell.score, view.metric));
          const interval = escapeMarkdown(formatInterval(cell.score, view.metric));
          return `${cell.best ? `**${score}**` : score} (${interval})${cell.mark ? ` ${cell.mark}` : ''}`;
        }),
      ]),
    ),
    ...(note === '' ? [] : ['', escapeMarkdown(note)]),
  ];
}

function baselineLines(comparisons: readonly BaselineComparison[], alpha: number): string[] {
  return [
    '### Against the best heuristic',
    '',
    escapeMarkdown(baselineCaption(alpha)),
    '',
    tableLine(BASELINE_HEADER.map((column) => escapeMarkdown(column))),
    tableLine(BASELINE_NUMERIC.map((numeric) => (numeric ? '--:' : '---'))),
    ...baselineRows(comparisons).map((row) => tableLine(row.map(escapeMarkdown))),
  ];
}

function tableLine(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

const HTML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes text for HTML and SVG element content and for double- or single-quoted attribute
 * values, so untrusted names (tasks, policies, commands) can never open a tag or attribute.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ENTITIES[char]!);
}

/**
 * Escapes text for a Markdown (GFM) table cell: backslash-escapes the characters that start
 * emphasis, code, links, HTML or strikethrough or end the cell (`|`), and folds line breaks,
 * which would end the table row, into spaces.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/\r\n?|\n/g, ' ').replace(/[\\`*_[\]<>&|~]/g, '\\$&');
}

/**
 * A Markdown code span holding `text` verbatim inside a GFM table cell: the backtick fence is
 * one longer than the longest backtick run in `text`, `|` is escaped (GFM splits cells before
 * it parses code spans) and line breaks become spaces.
 */
export function markdownCode(text: string): string {
  const flat = text.replace(/\r\n?|\n/g, ' ').replace(/\|/g, '\\|');
  const longestRun = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const padded = flat.startsWith('`') || flat.endsWith('`') ? ` ${flat} ` : flat;
  return `${fence}${padded}${fence}`;
}

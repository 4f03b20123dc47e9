/**
 * The `<svg>` element of a figure rendered by `renderChartFigure`, as the text of a standalone
 * `.svg` file (with the SVG namespace, which an inline `<svg>` may omit), for Markdown reports
 * that link their figures.
 */
export function standaloneSvg(figure: string): string {
  const start = figure.indexOf('<svg');
  const end = figure.lastIndexOf('</svg>') + '</svg>'.length;
  const element = figure.slice(start, end);
  return `${element.includes('xmlns=') ? element : element.replace('<svg', '<svg xmlns="http://www.w3.org/2000/svg"')}\n`;
}

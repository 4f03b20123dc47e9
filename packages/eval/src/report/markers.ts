import { escapeHtml } from './escape';

/** Marker shapes of chart points, each recognisable without its colour. */
export const MARKER_SHAPES = [
  'circle',
  'square',
  'triangle',
  'diamond',
  'triangle-down',
  'pentagon',
  'star',
  'hexagon',
  'plus',
  'cross',
] as const;

/** A marker shape of {@link MARKER_SHAPES}. */
export type MarkerShape = (typeof MARKER_SHAPES)[number];

/** How a series is drawn: colour, line dash and marker. */
export interface SeriesStyle {
  readonly color: string;
  /** SVG `stroke-dasharray` of the line, `none` for solid. */
  readonly dash: string;
  readonly marker: MarkerShape;
}

/** Marker radius in px: shapes are scaled to about the area of a circle of this radius. */
const MARKER_RADIUS = 4.5;

/**
 * An SVG element drawing `shape` centred on (x, y), filled with `color` and outlined in white
 * so that touching markers stay apart; `extra` is appended to its attributes (e.g. a class) and
 * `content` goes inside it (e.g. a `<title>` tooltip).
 */
export function markerSvg(
  shape: MarkerShape,
  x: number,
  y: number,
  color: string,
  extra = '',
  content = '',
): string {
  const paint = `fill="${escapeHtml(color)}" stroke="#fff" stroke-width="1"${extra === '' ? '' : ` ${extra}`}`;
  const r = MARKER_RADIUS;
  if (shape === 'circle') {
    return `<circle cx="${x.toFixed(2)}" cy="${y.toFixed(2)}" r="${r}" ${paint}>${content}</circle>`;
  }
  const points = outline(shape, r)
    .map(([dx, dy]) => `${(x + dx).toFixed(2)},${(y + dy).toFixed(2)}`)
    .join(' ');
  return `<polygon points="${points}" ${paint}>${content}</polygon>`;
}

/**
 * A legend glyph: a 28 px line in the series' colour and dash with its marker in the middle,
 * centred vertically on `y` and starting at `x`.
 */
export function glyphSvg(style: SeriesStyle, x: number, y: number): string {
  const stroke = `stroke="${escapeHtml(style.color)}" stroke-dasharray="${escapeHtml(style.dash)}"`;
  return (
    `<line x1="${x}" y1="${y}" x2="${x + 28}" y2="${y}" ${stroke} stroke-width="2"/>` +
    markerSvg(style.marker, x + 14, y, style.color)
  );
}

/** Vertices (dx, dy) of a polygon marker of about the area of a circle of radius `r`. */
function outline(shape: Exclude<MarkerShape, 'circle'>, r: number): [number, number][] {
  switch (shape) {
    case 'square':
      return regular(4, r * 1.25, 45);
    case 'triangle':
      return regular(3, r * 1.45, 0);
    case 'triangle-down':
      return regular(3, r * 1.45, 180);
    case 'diamond':
      return regular(4, r * 1.35, 0);
    case 'pentagon':
      return regular(5, r * 1.15, 0);
    case 'hexagon':
      return regular(6, r * 1.1, 30);
    case 'star':
      return star(5, r * 1.55, r * 0.65);
    case 'plus':
      return plus(r * 1.4, r * 0.5, 0);
    case 'cross':
      return plus(r * 1.4, r * 0.5, 45);
  }
}

/** A regular n-gon of circumradius `r`, first vertex `degrees` clockwise from straight up. */
function regular(n: number, r: number, degrees: number): [number, number][] {
  return Array.from({ length: n }, (_, i) => polar(r, degrees + (360 * i) / n));
}

function star(n: number, outer: number, inner: number): [number, number][] {
  return Array.from({ length: 2 * n }, (_, i) => polar(i % 2 === 0 ? outer : inner, (180 * i) / n));
}

/** A plus sign with arms reaching `reach` and `half` their half-width, turned by `degrees`. */
function plus(reach: number, half: number, degrees: number): [number, number][] {
  const arm: [number, number][] = [
    [-half, -reach],
    [half, -reach],
    [half, -half],
  ];
  return [0, 90, 180, 270].flatMap((turn) => arm.map(([dx, dy]) => rotate(dx, dy, turn + degrees)));
}

function polar(r: number, degrees: number): [number, number] {
  return rotate(0, -r, degrees);
}

function rotate(dx: number, dy: number, degrees: number): [number, number] {
  const a = (degrees * Math.PI) / 180;
  return [dx * Math.cos(a) - dy * Math.sin(a), dx * Math.sin(a) + dy * Math.cos(a)];
}

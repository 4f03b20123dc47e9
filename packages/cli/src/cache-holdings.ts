import { type KVCacheStore, NO_NEEDS } from '@lethe/kv-cache';

/** How {@link renderCacheHoldings} draws. */
export interface HoldingsStyle {
  /** ANSI colours: evicted dimmed, held by only some KV heads in yellow. */
  readonly color: boolean;
  /** One row per (layer, KV head) instead of one per layer. */
  readonly perHead: boolean;
  /** Glyphs per row before wrapping into another block (`Infinity`: one row per layer). */
  readonly width: number;
}

/** Placeholder of a token no KV head of the row holds. */
export const EVICTED_GLYPH = '·';

const DIM = '\u001b[2m';
const YELLOW = '\u001b[33m';
const RESET = '\u001b[0m';

/**
 * Which tokens `cache` still holds, as text: for each layer (or each layer and KV head) a row
 * `L<layer> <held>/<tokens> │<text>│` where a token the row holds is drawn as its glyph and an
 * evicted one as `·` (token `i` of `glyphs` is the token at position `i`). In a layer row a token
 * counts as held when any KV head holds it (per-head policies keep different sets; with colour,
 * such partly held tokens are yellow). Rows wider than `style.width` glyphs wrap into blocks
 * with one row per layer each.
 */
export function renderCacheHoldings(
  cache: KVCacheStore,
  glyphs: readonly string[],
  style: HoldingsStyle,
): string[] {
  const { kvHeads } = cache.geometry;
  const tokens = glyphs.length;
  const rows: { label: string; heldBy: Uint8Array; heads: number }[] = [];
  for (const [layer, heads] of heldPositions(cache).entries()) {
    const perHead = heads.map((positions) => {
      const held = new Uint8Array(tokens);
      for (const position of positions) if (position >= 0 && position < tokens) held[position] = 1;
      return held;
    });
    if (style.perHead) {
      perHead.forEach((held, h) => {
        rows.push({ label: `L${layer}.h${h}`, heldBy: held, heads: 1 });
      });
    } else {
      const heldBy = new Uint8Array(tokens);
      for (const held of perHead) for (let p = 0; p < tokens; p++) heldBy[p]! += held[p]!;
      rows.push({ label: `L${layer}`, heldBy, heads: kvHeads });
    }
  }
  const labels = rows.map(({ label, heldBy }) => {
    const held = heldBy.reduce((n, count) => n + (count > 0 ? 1 : 0), 0);
    return `${label} ${held}/${tokens}`;
  });
  const labelWidth = Math.max(...labels.map((l) => l.length));
  const width = Number.isFinite(style.width)
    ? Math.max(8, Math.floor(style.width))
    : Math.max(1, tokens);
  const lines: string[] = [];
  for (let start = 0; start < Math.max(1, tokens); start += width) {
    if (start > 0) lines.push('');
    rows.forEach(({ heldBy, heads }, r) => {
      let text = '';
      for (let p = start; p < Math.min(tokens, start + width); p++) {
        text += cell(glyphs[p]!, heldBy[p]!, heads, style.color);
      }
      lines.push(`${labels[r]!.padEnd(labelWidth)} │${text}│`);
    });
  }
  return lines;
}

/**
 * The positions each KV head of `cache` holds, ascending, as `held[layer][kvHead]` (so
 * `held[l][h].length` is that head's live count), read from a positions-only observation of each
 * layer — one every cache serves (a device cache's keys may live on its device alone).
 */
export function heldPositions(cache: KVCacheStore): number[][][] {
  const { layers, kvHeads } = cache.geometry;
  return Array.from({ length: layers }, (_, layer) => {
    const view = cache.observe(layer, NO_NEEDS);
    return Array.from({ length: kvHeads }, (_, h) => {
      const start = h * view.maxLive;
      const live = view.positions.subarray(start, start + view.liveCounts[h]!);
      return Array.from(live).sort((a, b) => a - b);
    });
  });
}

function cell(glyph: string, heldBy: number, heads: number, color: boolean): string {
  if (heldBy === 0) {
    const blank = EVICTED_GLYPH.repeat(Array.from(glyph).length);
    return color ? `${DIM}${blank}${RESET}` : blank;
  }
  if (color && heldBy < heads) return `${YELLOW}${glyph}${RESET}`;
  return glyph;
}

/** A score as a bar of ten cells, `█████████░  90%`, for the posture table on a terminal. */
import type { OutputStream } from '../io.js';

/** Cells in a bar; each is 10 %. */
export const BAR_WIDTH = 10;

/** The bar's text: full cells for the score (rounded down, so 99 % never looks complete), light ones for the rest. */
export function scoreBar(pct: number, width = BAR_WIDTH): string {
  const clamped = Math.max(0, Math.min(100, Number.isFinite(pct) ? pct : 0));
  const full = Math.floor((clamped / 100) * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

/** The colour of a score: green from 80 %, yellow from 50 %, red below (the default gate thresholds are 70–80 %). */
export function scoreColor(pct: number, out: OutputStream): (text: string) => string {
  if (pct >= 80) return out.color.green;
  if (pct >= 50) return out.color.yellow;
  return out.color.red;
}

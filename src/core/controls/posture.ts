/**
 * Posture scoring (docs/service.md "GET …/grc/posture-brief", docs/controls.md), pure and O(number of controls): it reads a coverage map
 * (control id → the latest epoch ms at which a record earned it), never a list of records.
 *
 * - A control is covered when it was earned within its freshness window:
 *   `now − lastEarned ≤ freshness_days × 86 400 000` (inclusive; a record dated after `now` counts
 *   as fresh, so the service should refuse far-future `occurred_at` values at ingest).
 * - Framework score = ⌊covered required ÷ required × 100⌋.
 * - `overall_pct` = ⌊all covered required ÷ all required × 100⌋ over the five frameworks, i.e. an
 *   average weighted by each framework's number of required controls.
 */
import { FRAMEWORKS, type Framework } from '../records/types.js';
import { controlsForFramework, type Control, type EvidenceRule } from './catalogue.js';

export const DAY_MS = 86_400_000;

/** What the service keeps per workspace: control id → latest epoch ms it was earned. */
export type Coverage = ReadonlyMap<string, number>;

export interface FrameworkScore {
  readonly framework: Framework;
  /** integer percent, rounded down */
  readonly score_pct: number;
}

/** The scoring part of the posture brief (docs/service.md "GET …/grc/posture-brief"). */
export interface PostureScores {
  readonly overall_pct: number;
  readonly frameworks: FrameworkScore[];
}

/** A required control that is not covered, and the records that would cover it. */
export interface MissingControl {
  readonly control_id: string;
  readonly evidenced_by: readonly EvidenceRule[];
}

/** The detail behind a framework's score. */
export interface FrameworkCoverage {
  readonly framework: Framework;
  readonly required: number;
  readonly covered: number;
  readonly score_pct: number;
  /** uncovered required controls, in catalogue order */
  readonly missing: readonly MissingControl[];
}

/** Whether a control counts as covered at `nowMs`. */
export function isCovered(control: Control, coverage: Coverage, nowMs: number): boolean {
  const earnedAt = coverage.get(control.id);
  return earnedAt !== undefined && Number.isFinite(earnedAt) && nowMs - earnedAt <= control.freshness_days * DAY_MS;
}

/** ⌊part ÷ whole × 100⌋ in integers; 0 when there is nothing to count. */
export function percentDown(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.floor((part * 100) / whole);
}

/** Coverage of one framework at `nowMs`, with its missing required controls. */
export function frameworkCoverage(framework: Framework, coverage: Coverage, nowMs: number): FrameworkCoverage {
  let required = 0;
  let covered = 0;
  const missing: MissingControl[] = [];
  for (const control of controlsForFramework(framework)) {
    if (!control.required) continue;
    required += 1;
    if (isCovered(control, coverage, nowMs)) covered += 1;
    else missing.push({ control_id: control.id, evidenced_by: control.evidenced_by });
  }
  return { framework, required, covered, score_pct: percentDown(covered, required), missing };
}

/** Coverage of every framework, in the fixed framework order. */
export function coverageByFramework(coverage: Coverage, nowMs: number): FrameworkCoverage[] {
  return FRAMEWORKS.map((framework) => frameworkCoverage(framework, coverage, nowMs));
}

/**
 * The posture scores at `nowMs`: `overall_pct` and one `{ framework, score_pct }` per framework in
 * the fixed order `eu_ai_act, iso_42001, soc2_type2, iso_27001, nist_airf`.
 *
 * @example frameworkScores(new Map([['EUAIA_ART9', Date.now()]]), Date.now()).frameworks[0] // { framework: 'eu_ai_act', score_pct: 10 }
 */
export function frameworkScores(coverage: Coverage, nowMs: number): PostureScores {
  return scoresFrom(coverageByFramework(coverage, nowMs));
}

/** The wire-shaped scores from already computed coverage (so gates and posture share one pass). */
export function scoresFrom(byFramework: readonly FrameworkCoverage[]): PostureScores {
  let required = 0;
  let covered = 0;
  for (const entry of byFramework) {
    required += entry.required;
    covered += entry.covered;
  }
  return {
    overall_pct: percentDown(covered, required),
    frameworks: byFramework.map((entry) => ({ framework: entry.framework, score_pct: entry.score_pct })),
  };
}

/** Per framework, the uncovered required controls and which record types would cover each. */
export function missingControls(coverage: Coverage, nowMs: number): Record<Framework, readonly MissingControl[]> {
  const out = {} as Record<Framework, readonly MissingControl[]>;
  for (const entry of coverageByFramework(coverage, nowMs)) out[entry.framework] = entry.missing;
  return out;
}

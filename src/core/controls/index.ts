/** The control catalogue (data) and the pure scoring: mapping, posture, gates, derive (wire.md §2–3). */
export * from './catalogue.js';
export * from './mapping.js';
export * from './posture.js';
export * from './gates.js';
export * from './derive.js';
export * from './policy-changes.js';

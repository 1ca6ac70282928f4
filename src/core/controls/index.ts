/** The control catalogue (data) and the pure scoring: mapping, posture, gates, derive (docs/controls.md). */
export * from './catalogue.js';
export * from './mapping.js';
export * from './posture.js';
export * from './gates.js';
export * from './derive.js';

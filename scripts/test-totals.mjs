// @ts-check
// Prints the vitest JSON report's totals as "N passed, N failed" on a line of their own (see .ci/run).
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'test-results.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.error(`test totals: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const failed = report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0);
const skipped = report.numPendingTests + (report.numTodoTests ?? 0);
console.log(`${report.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(report.numTotalTests > 0 && failed === 0 ? 0 : 1);

// Prints the totals of one or more vitest JSON reports as "N passed, N failed" on a line of their
// own (see .ci/run); exits 1 when a report is missing or unreadable, a test failed, or none ran.
import { readFileSync } from 'node:fs';

const files = process.argv.length > 2 ? process.argv.slice(2) : ['test-results.json'];
let passed = 0;
let failed = 0;
let skipped = 0;
let total = 0;
let unreadable = false;
for (const file of files) {
  try {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    passed += report.numPassedTests;
    failed += report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0);
    skipped += report.numPendingTests + (report.numTodoTests ?? 0);
    total += report.numTotalTests;
  } catch (error) {
    console.error(`test totals: cannot read ${file}: ${error.message}`);
    unreadable = true;
  }
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(!unreadable && total > 0 && failed === 0 ? 0 : 1);

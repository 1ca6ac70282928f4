/**
 * Builds dist/ once before the suite, so end-to-end tests run the CLI and library as built from the
 * current source and no test file has to rebuild (which would race with the others).
 */
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs', '--no-types'], { stdio: 'inherit' });
}

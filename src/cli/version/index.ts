/**
 * `govctl version`: what is running, for a bug report or a pipeline's log: the version, the git
 * commit it was built from (scripts/build.mjs embeds it; `unknown` when the build had no git
 * checkout, or when run from the sources), Node's version and the platform. `govctl --version`
 * prints the version alone.
 */
import { Command } from 'commander';
import { CLIENT_VERSION } from '../../client/version.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printFields, printJson } from '../render.js';

/** Replaced by the build (esbuild `define`) with the commit of the checkout it was built from. */
declare const __GOVCTL_COMMIT__: string | undefined;

/** What `govctl version --json` prints. */
export interface VersionReport {
  version: string;
  commit: string;
  node: string;
  platform: string;
}

/** The build's details. The version is package.json's (the library's constant is kept equal to it by a test). */
export function versionReport(): VersionReport {
  const commit = typeof __GOVCTL_COMMIT__ === 'string' && __GOVCTL_COMMIT__ !== '' ? __GOVCTL_COMMIT__ : 'unknown';
  return { version: CLIENT_VERSION, commit, node: process.version, platform: `${process.platform}-${process.arch}` };
}

export function createVersionCommand(factory: Factory): Command {
  const command = new Command('version').description('show the version, the commit it was built from, the Node version and the platform').action(async () => {
    const report = versionReport();
    if (factory.globals.json === true) return printJson(factory.io.stdout, report);
    await printFields(factory.io.stdout, [
      ['version', report.version],
      ['commit', report.commit],
      ['node', report.node],
      ['platform', report.platform],
    ]);
  });
  command.addHelpText('after', '\nPiped: name<TAB>value lines. --json prints {version, commit, node, platform}.\n');
  return addExamples(command, ['govctl version', 'govctl version --json | jq -r .commit']);
}

/**
 * `govctl whoami`: whose API key this is (GET /api/me, docs/service.md "GET /api/me").
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printFields, printJson } from '../render.js';

/** `whoami` takes no options of its own; `--json` is global. */
export interface WhoamiOptions {
  json: boolean;
}

export function createWhoamiCommand(factory: Factory): Command {
  const command = new Command('whoami')
    .description('show the user, workspace and organisation of the API key (GET /api/me)')
    .action(async () => run({ json: factory.globals.json === true }, factory));
  return addExamples(command, ['govctl whoami', 'govctl whoami --json | jq -r .workspace_id']);
}

export async function run(options: WhoamiOptions, deps: Factory): Promise<void> {
  const api = await deps.api();
  const me = await api.me();
  if (options.json) return printJson(deps.io.stdout, me);
  await printFields(deps.io.stdout, [
    ['user_id', me.user_id],
    ['workspace_id', me.workspace_id],
    ['org_id', me.org_id],
  ]);
}

/**
 * `govctl config show`: every effective setting, its value (secrets masked) and where it came
 * from: a flag, an environment variable, the project config file, the user config file or the
 * default (docs/cli.md "Settings"). `--json` prints the {@link ConfigReport} object.
 */
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printJson, printTable, type Column } from '../render.js';
import { displayPath, SETTING_NAMES, userConfigPath, type SettingName } from '../settings.js';
import { describeConfig, type ConfigReport, type ShownSetting } from './describe.js';

export interface ConfigShowOptions {
  json: boolean;
}

export function createConfigShowCommand(factory: Factory): Command {
  const command = new Command('show')
    .description('show every effective setting, its value (secrets masked) and where it came from')
    .action(async () => run({ json: factory.globals.json === true }, factory));
  command.addHelpText(
    'after',
    '\nSources, highest first: flag, env (SERVICE_*), explicit (--config FILE) or project (.govctlrc… searched\n' +
      'upward), user\n' +
      '($XDG_CONFIG_HOME/govctl/config.json), default. The API key shows as its prefix and last four\n' +
      'characters (gk_…ab12); the signing key only as its public key.\n' +
      '\nPiped, one line per setting: setting, value, source, origin (tab-separated; empty when unset).\n' +
      '--json prints {settings: {<setting>: {value, source, origin}}, files: {project, user, user_exists, explicit},\n' +
      'trusted_hosts: [{origin, from}], connection: {kind: remote, base_url} | {kind: local, data_dir} | {kind: error, message}}.\n' +
      'A base URL is shown without its userinfo or query string (http://***@host/?***).\n',
  );
  return addExamples(command, [
    'govctl config show',
    'SERVICE_BASE_URL=https://governance.example.com govctl config show',
    'govctl config show --json | jq -r .settings.baseUrl.source',
  ]);
}

interface Row {
  setting: SettingName;
  shown: ShownSetting;
}

const COLUMNS: readonly Column<Row>[] = [
  { header: 'setting', value: (row) => row.setting },
  { header: 'value', value: (row) => row.shown.value ?? '', style: (text, out, row) => (row.shown.value === null ? out.color.dim(text) : text) },
  {
    header: 'source',
    value: (row) => (row.shown.source === 'unset' ? '' : row.shown.origin ? `${row.shown.source}: ${row.shown.origin}` : row.shown.source),
    style: (text, out, row) => (row.shown.source === 'default' || row.shown.source === 'unset' ? out.color.dim(text) : text),
  },
];

const TSV_COLUMNS: readonly Column<Row>[] = [
  { header: 'setting', value: (row) => row.setting },
  { header: 'value', value: (row) => row.shown.value ?? '' },
  { header: 'source', value: (row) => row.shown.source },
  { header: 'origin', value: (row) => row.shown.origin },
];

export async function run(options: ConfigShowOptions, deps: Factory): Promise<void> {
  const settings = await deps.settings();
  const userPath = userConfigPath(deps.env);
  const report: ConfigReport = await describeConfig(settings, deps.env, { path: userPath, exists: existsSync(userPath) });
  const out = deps.io.stdout;
  if (options.json) return printJson(out, report);
  const rows = SETTING_NAMES.map((setting) => ({ setting, shown: report.settings[setting] }));
  await printTable(out, out.isTTY ? COLUMNS : TSV_COLUMNS, rows, { now: deps.clock });
  if (!out.isTTY) return;
  const { connection, files } = report;
  const where =
    connection.kind === 'remote'
      ? `commands go to ${connection.base_url}`
      : connection.kind === 'local'
        ? `commands use the local store in ${displayPath(connection.data_dir)}`
        : out.color.red(`commands fail: ${connection.message}`);
  const lines = [
    where,
    files.explicit
      ? `config file:    ${displayPath(files.explicit)} (--config; no project config searched for)`
      : `project config: ${files.project ? displayPath(files.project) : out.color.dim('none found')}`,
    `user config:    ${displayPath(files.user)}${files.user_exists ? '' : out.color.dim(' (not there; `govctl config init` writes it)')}`,
    `trusted hosts:  ${report.trusted_hosts.length ? report.trusted_hosts.map((host) => host.origin).join(', ') : out.color.dim('none pinned (`govctl config trust-host URL`)')}`,
  ];
  await out.write(lines.join('\n') + '\n');
}

/** Option helpers shared by the admin commands. */
import { InvalidArgumentError } from 'commander';
import { UsageError } from '../errors.js';
import type { Factory } from '../factory.js';

const UNIT_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 };

/**
 * `--expires-in`: a whole number of hours, days, weeks or years (`12h`, `90d`, `2w`, `1y`), in ms.
 * @example parseDuration('90d') // 7776000000
 */
export function parseDuration(value: string): number {
  const match = /^(\d{1,6})([hdwy])$/.exec(value.trim());
  if (!match || Number(match[1]) === 0) throw new InvalidArgumentError('--expires-in must be a whole number followed by h, d, w or y (e.g. 90d)');
  return Number(match[1]) * UNIT_MS[match[2]];
}

/**
 * The workspace of an admin command: the global `--workspace` flag only. The `SERVICE_WORKSPACE_ID`
 * of a client configuration is not used, so an administrator always names the workspace changed.
 */
export function adminWorkspace(factory: Factory, required: true, command: string): string;
export function adminWorkspace(factory: Factory, required: false, command: string): string | undefined;
export function adminWorkspace(factory: Factory, required: boolean, command: string): string | undefined {
  const workspace = factory.globals.workspace?.trim();
  if (workspace) return workspace;
  if (!required) return undefined;
  throw new UsageError(`${command} needs --workspace WS`, {
    field: '--workspace',
    hint: '`govctl admin api-key list --db FILE` shows the workspace of each key',
  });
}

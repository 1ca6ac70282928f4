/**
 * `govctl evidence add <record-type> [flags]`: build, validate, sign and store one GRC record
 * (POST grc/evidence, spec §4.2); `--dry-run` shows the controls it would earn and stores nothing.
 * One subcommand per record type, with flags generated from the catalogue (record-flags.ts).
 */
import { Command, Option } from 'commander';
import {
  CATALOGUE,
  CLIENT_SIG_ALGO,
  EXAMPLE_SYSTEM,
  buildRecord,
  exampleSelection,
  isPlainObject,
  signClientSig,
  type EvidenceRecord,
  type FieldSpec,
  type RecordType,
  type RecordTypeSpec,
  type ValidationIssue,
} from '../../core/index.js';
import type { GrcWriteResult } from '../../client/wire-types.js';
import { addExamples, markWrite, outsideFlagDomain } from '../command-kit.js';
import { DataError, UsageError } from '../errors.js';
import { idempotencyKeyFor } from '../../client/idempotency.js';
import type { Factory } from '../factory.js';
import { readJsonDocuments } from '../input.js';
import { plural, printJson } from '../render.js';
import { terminalText } from '../terminal-text.js';
import { flagForPath, readFlags, recordFlags, type FlagValues, type RecordFlags } from '../record-flags.js';

/** Options of one `evidence add <type>` run. */
export interface EvidenceAddOptions {
  recordType: RecordType;
  /** commander's parsed values of the generated flags */
  flagValues: Record<string, unknown>;
  payloadFile?: string;
  dryRun: boolean;
  json: boolean;
  /** send an idempotency key derived from the record (default true; `--no-idempotency`) */
  idempotency?: boolean;
}

/** A word as a POSIX shell reads it back: bare when plain, double-quoted otherwise. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `"${text.replace(/(["\\$`])/g, '\\$1')}"`;
}

/** The flags that give a field its catalogue example: one per list item or map entry. */
function exampleFlags(flag: string, field: FieldSpec): string[] {
  const value = field.example;
  if (typeof value === 'boolean') return [value ? `--${flag}` : `--no-${flag}`];
  if (Array.isArray(value)) return value.map((item: string) => `--${flag} ${shellWord(item)}`);
  if (typeof value === 'object') return Object.entries(value).map(([name, n]) => `--${flag} ${shellWord(`${name}=${n}`)}`);
  return [`--${flag} ${shellWord(String(value))}`];
}

/**
 * An example command line per record type, from the catalogue's example values (exampleSelection:
 * the flags that must be given, and any optional one a rule then requires). A test runs each one.
 */
export function exampleFor(spec: RecordTypeSpec, flags: RecordFlags): string {
  const { fields, topInputs } = exampleSelection(spec);
  const parts = [`govctl evidence add ${spec.type} --system ${EXAMPLE_SYSTEM}`];
  for (const binding of flags.bindings) {
    // A field that the global --system fills (change_event's `system`) is given by --system.
    if (binding.kind === 'field' && !binding.global && fields.includes(binding.field)) parts.push(...exampleFlags(binding.flag, binding.field));
    else if (binding.kind === 'top' && topInputs.includes(binding.input)) parts.push(`--${binding.flag} ${shellWord(binding.input.example)}`);
  }
  return parts.join(' ');
}

/** `evidence add` with one subcommand per record type. */
export function createEvidenceAddCommand(factory: Factory): Command {
  const add = new Command('add').description('build, validate, sign (with a signing key) and store one evidence record').usage('<record-type> [flags]');
  for (const spec of CATALOGUE.values()) add.addCommand(createRecordTypeCommand(spec, factory));
  return addExamples(add, [
    'govctl evidence add ai_risk_assessment --help',
    'govctl evidence add change_event --system loan-scorer --type deployment --by ci@example.com --description "v2.3" --environment production',
    'govctl evidence add model_evaluation --payload-file eval.json --system loan-scorer --dry-run',
  ]);
}

function createRecordTypeCommand(spec: RecordTypeSpec, factory: Factory): Command {
  const flags = recordFlags(spec);
  const command = new Command(spec.type)
    .summary(spec.summary)
    .description(`${spec.title}: ${spec.summary}. Flags marked (required) must be given (or be in --payload-file).`);
  for (const option of flags.options) command.addOption(option);
  command
    .addOption(new Option('--payload-file <file|->', 'the payload as JSON (flags given as well override its keys)'))
    .option('--dry-run', 'show the controls the record would earn; store nothing')
    .option('--no-idempotency', 'send no idempotency key (the key lets a retried write be answered instead of stored twice)')
    .action(async (opts: Record<string, unknown>) =>
      run(
        {
          recordType: spec.type,
          flagValues: opts,
          payloadFile: opts.payloadFile as string | undefined,
          dryRun: opts.dryRun === true,
          json: factory.globals.json === true,
          idempotency: opts.idempotency !== false,
        },
        factory,
      ),
    );
  markWrite(command);
  return addExamples(command, [exampleFor(spec, flags), `govctl evidence add ${spec.type} --payload-file payload.json --system loan-scorer --dry-run`]);
}

/**
 * One line listing every issue, with flags named as typed; an issue that two members share (the
 * top-level `environment` and `payload.environment`, both from `--environment`) is said once.
 */
export function describeIssues(what: string, issues: readonly ValidationIssue[], flags: RecordFlags, values?: FlagValues): string {
  const said = new Map<string, { flag: string; message: string; given?: string }>();
  for (const found of issues) {
    const flag = flagForPath(found.path, flags);
    const key = `${flag.split(' ')[0]}\u0000${found.message}`;
    // A malformed flag value is named with the flag (docs/exit-codes.md "Malformed values"),
    // whichever of the two members one flag fills carries it.
    const given =
      values !== undefined && !found.message.includes(', got "') && isMalformedFlagValue(found, values, flags) ? typedValue(found.path, values) : undefined;
    const before = said.get(key);
    if (before === undefined) said.set(key, { flag, message: found.message, ...(given !== undefined && { given }) });
    else if (before.given === undefined && given !== undefined) before.given = given;
  }
  const lines = [...said.values()].map(({ flag, message, given }) => `${flag} ${message}${given !== undefined ? `, got ${JSON.stringify(given)}` : ''}`);
  return `${what} is invalid: ${lines.join('; ')}`;
}

/** The value typed for the flag behind an issue's path (`payload.severity`, `payload.impact_domains.2`, `occurred_at`), if a string. */
function typedValue(path: string, values: FlagValues): string | undefined {
  const match = /^payload\.([^.]+)(?:\.(\d+))?$/.exec(path);
  let value: unknown = match ? values.payload[match[1]] : (values.overrides[path] ?? values.top[path]);
  if (match?.[2] !== undefined && Array.isArray(value)) value = value[Number(match[2])];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether an issue is a malformed flag value (64, docs/exit-codes.md "Malformed values"): a value
 * typed on the command line that is not of its flag's type, format, enum or range. A required
 * field left out, a rule across fields, and anything from --payload-file are the record's (65).
 */
export function isMalformedFlagValue(found: ValidationIssue, values: FlagValues, flags: RecordFlags): boolean {
  if (!outsideFlagDomain(found)) return false;
  const match = /^payload\.([^.]+)/.exec(found.path);
  if (match) {
    const binding = flags.bindings.find((b) => b.kind === 'field' && b.field.wire === match[1]);
    // A field filled from a global setting (--system, or the environment) is the record's.
    return binding !== undefined && binding.kind === 'field' && !binding.global && Object.hasOwn(values.payload, match[1]);
  }
  return values.overrides[found.path] !== undefined || values.top[found.path] !== undefined;
}

export async function run(options: EvidenceAddOptions, deps: Factory): Promise<void> {
  const spec = CATALOGUE.get(options.recordType)!;
  const flags = recordFlags(spec);
  const settings = await deps.settings();
  const values = readFlags(flags, options.flagValues, { systemName: settings.systemName });

  let payload: Record<string, unknown> = values.payload;
  if (options.payloadFile !== undefined) {
    const documents = await readJsonDocuments(options.payloadFile, deps, 'the payload');
    const [document] = documents;
    if (documents.length !== 1 || !isPlainObject(document)) {
      throw new DataError('--payload-file must hold one JSON object (the payload)', {
        field: '--payload-file',
        hint: 'give the payload object, not the whole record',
      });
    }
    payload = { ...document, ...values.payload };
  }

  const built = buildRecord(spec.type, { payload, top: values.top, systemName: settings.systemName, overrides: values.overrides }, deps.clock);
  const parsedPaths = new Set(values.issues.map((found) => found.path));
  const issues = [...values.issues, ...(built.ok ? [] : built.issues.filter((found) => !parsedPaths.has(found.path)))];
  if (!built.ok || issues.length > 0) {
    const message = describeIssues(`the ${spec.type} record`, issues, flags, values);
    const hint = `see \`govctl evidence add ${spec.type} --help\``;
    // values.issues are flag values that did not parse (`--accuracy abc`): malformed by definition.
    const malformed = values.issues[0] ?? issues.find((found) => isMalformedFlagValue(found, values, flags));
    if (malformed) throw new UsageError(message, { field: flagForPath(malformed.path, flags).split(' ')[0], hint });
    throw new DataError(message, { code: 'validation_error', field: issues[0]?.path, hint });
  }
  const record: EvidenceRecord = built.record;

  const key = await deps.signingKey();
  if (key) {
    record.client_sig = signClientSig(record, await deps.workspaceId(), key);
    record.client_sig_algo = CLIENT_SIG_ALGO;
  }
  const api = await deps.api();
  // The key derived from the record as sent: the client's retry after a timeout or a 5xx (and a
  // re-run with the same record, e.g. the same --occurred-at) is answered instead of stored twice.
  const idempotency = options.idempotency !== false && !options.dryRun;
  const result = await api.postEvidence(record, { dryRun: options.dryRun, ...(idempotency ? { idempotencyKey: idempotencyKeyFor(record) } : {}) });
  await printWriteResult(deps, result, { dryRun: options.dryRun, json: options.json, signed: key !== undefined });
}

/** Prints a GRC write result in the three shapes. */
async function printWriteResult(deps: Factory, result: GrcWriteResult, how: { dryRun: boolean; json: boolean; signed: boolean }): Promise<void> {
  const out = deps.io.stdout;
  if (how.json) return printJson(out, result);
  const controls = (result.mapped_controls ?? []).map((control) => terminalText(String(control)));
  if (!out.isTTY) {
    await out.write(
      `${[result.record_id, result.record_type, result.detail].map((value) => terminalText(String(value).replace(/[\t\r\n]+/g, ' '))).join('\t')}\t${controls.join(',')}\n`,
    );
    return;
  }
  const c = out.color;
  const head = how.dryRun
    ? `${c.yellow('dry run:')} this ${terminalText(String(result.record_type))} record would earn ${plural(controls.length, 'control')} (nothing stored)`
    : `${c.green('✓')} stored ${c.bold(terminalText(String(result.record_id)))} (${terminalText(String(result.record_type))}${how.signed ? ', signed' : ''}), earning ${plural(controls.length, 'control')}`;
  await out.write(`${head}${controls.length ? ':' : ''}\n${controls.map((control) => `  ${control}`).join('\n')}${controls.length ? '\n' : ''}`);
}

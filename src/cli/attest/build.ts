/**
 * What `attest <tool-name>` and `attest sign` share: their flags, streaming SHA-256 of the input
 * and output (files or stdin), and building, validating and signing the attestation record
 * (docs/wire-format.md "Attestations", "witness_sig") exactly as it will be sent.
 */
import { Option } from 'commander';
import {
  buildAttestation,
  sha256Stream,
  signWitness,
  validateAttestation,
  type AttestationRecord,
  type SigningKey,
  type ValidationIssue,
} from '../../core/index.js';
import { outsideFlagDomain } from '../command-kit.js';
import { DataError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { openChunks } from '../input.js';
import { startProgress } from '../progress.js';
import type { AuthorisedBySetting, Settings } from '../settings.js';
import { displayPath } from '../settings.js';

/** The flags of one attestation (the system and agent are global options). */
export interface AttestFlags {
  input?: string;
  output?: string;
  inputHash?: string;
  outputHash?: string;
  modelId?: string;
  executedAt?: string;
  authorisedBy?: string;
  role?: string;
  sessionId?: string;
}

/** Fresh options for a command (commander options belong to one command each). */
export function attestOptions(): Option[] {
  return [
    new Option('--input <file|->', "the tool's input, hashed with SHA-256 as it streams (- reads stdin)"),
    new Option('--output <file|->', "the tool's output, hashed the same way"),
    new Option('--input-hash <hex>', "the input's SHA-256, when hashed already (64 hex characters)"),
    new Option('--output-hash <hex>', "the output's SHA-256, when hashed already"),
    new Option('--model-id <id>', 'the model that ran'),
    new Option('--executed-at <time>', 'when the tool ran, ISO 8601 (default: now)'),
    new Option('--authorised-by <email>', 'who authorised the run (authorised_by.identity)'),
    new Option('--role <role>', 'their role (with --authorised-by)'),
    new Option('--session-id <id>', 'the session (with --authorised-by)'),
  ];
}

/** Files hashed with a progress bar on a terminal from this size on. */
const PROGRESS_FROM_BYTES = 32 << 20;

/** The SHA-256 of one side: its file (or stdin) streamed through the hash, or the hash given. */
async function hashSide(side: 'input' | 'output', file: string | undefined, hash: string | undefined, deps: Factory): Promise<string> {
  if (file !== undefined && hash !== undefined) throw new UsageError(`give --${side} or --${side}-hash, not both`, { field: `--${side}` });
  if (hash !== undefined) return hash.trim().toLowerCase();
  if (file === undefined) {
    throw new UsageError(`the ${side} is missing: give --${side} FILE (or - for stdin) or --${side}-hash HEX`, { field: `--${side}` });
  }
  const opened = await openChunks(file, deps, `the ${side}`);
  const big = opened.size !== undefined && opened.size >= PROGRESS_FROM_BYTES;
  const progress = await startProgress(deps, {
    label: `hashing ${opened.name === 'stdin' ? 'stdin' : displayPath(opened.name)}`,
    total: opened.size,
    when: big,
  });
  try {
    const { hash: digest } = await sha256Stream(opened.chunks, (bytes) => progress.update(bytes));
    return digest;
  } finally {
    progress.stop();
  }
}

/** `--authorised-by` and friends, or `authorisedBy` from the settings (a config file). */
export function resolveAuthorisedBy(flags: AttestFlags, settings: Settings): AuthorisedBySetting | undefined {
  if (flags.authorisedBy !== undefined && flags.authorisedBy !== '') {
    const by: AuthorisedBySetting = { identity: flags.authorisedBy };
    if (flags.role) by.role = flags.role;
    if (flags.sessionId) by.sessionId = flags.sessionId;
    return by;
  }
  if (flags.role !== undefined || flags.sessionId !== undefined) {
    const flag = flags.role !== undefined ? '--role' : '--session-id';
    throw new UsageError(`${flag} goes with --authorised-by EMAIL`, { field: flag });
  }
  return settings.authorisedBy;
}

const FLAG_FOR_PATH: Readonly<Record<string, string>> = {
  system_name: '--system',
  agent_name: '--agent',
  tool_name: '<tool-name>',
  input_hash: '--input-hash',
  output_hash: '--output-hash',
  executed_at: '--executed-at',
  model_id: '--model-id',
  'authorised_by.identity': '--authorised-by',
  'authorised_by.role': '--role',
  'authorised_by.session_id': '--session-id',
};

/** One line listing every issue, named by flag; a malformed value typed on the command line (`given`) is named too. */
export function describeAttestationIssues(issues: readonly ValidationIssue[], given: Readonly<Record<string, unknown>> = {}): string {
  const named = (found: ValidationIssue) => {
    const value = given[found.path];
    return outsideFlagDomain(found) && typeof value === 'string' ? `, got ${JSON.stringify(value)}` : '';
  };
  return `the attestation is invalid: ${issues.map((found) => `${FLAG_FOR_PATH[found.path] ?? found.path} ${found.message}${named(found)}`).join('; ')}`;
}

/**
 * Hashes both sides, builds and validates the attestation, and signs it when a key is given.
 * @throws UsageError (64) for missing or conflicting flags or a missing system; DataError (65)
 *   for an invalid attestation; InputFileError (66) for an unreadable file
 */
export async function buildAttestationFromFlags(
  toolName: string,
  flags: AttestFlags,
  deps: Factory,
  signing: { key: SigningKey; workspaceId: () => Promise<string> } | undefined,
): Promise<AttestationRecord> {
  const settings = await deps.settings();
  if (!settings.systemName) {
    throw new UsageError('the system is missing: give --system NAME or set SERVICE_SYSTEM_NAME', { field: '--system' });
  }
  if (flags.input === '-' && flags.output === '-') throw new UsageError('--input and --output cannot both read stdin', { hint: 'give one of them as a file' });
  const authorisedBy = resolveAuthorisedBy(flags, settings);
  // A malformed digest is the command line's mistake (64), found before a large file is hashed.
  for (const [flag, value] of [
    ['--input-hash', flags.inputHash],
    ['--output-hash', flags.outputHash],
  ] as const) {
    if (value !== undefined && !/^[0-9a-f]{64}$/i.test(value.trim())) {
      throw new UsageError(`${flag} must be a hex SHA-256 digest (64 hex characters), got "${value}"`, {
        field: flag,
        hint: 'give the file with --input/--output to hash it instead',
      });
    }
  }
  const inputHash = await hashSide('input', flags.input, flags.inputHash, deps);
  const outputHash = await hashSide('output', flags.output, flags.outputHash, deps);
  const record = buildAttestation(
    {
      systemName: settings.systemName,
      agentName: settings.agentName,
      toolName,
      inputHash,
      outputHash,
      executedAt: flags.executedAt,
      modelId: flags.modelId,
      authorisedBy,
    },
    deps.clock,
  );
  const issues = validateAttestation(record);
  if (issues.length > 0) {
    // A value typed on the command line outside its flag's format (`--executed-at yesterday`) is a
    // usage error (64); what the settings gave (the system's name) is the record's (65).
    const given: Record<string, unknown> = {
      executed_at: flags.executedAt,
      model_id: flags.modelId,
      'authorised_by.identity': flags.authorisedBy,
      'authorised_by.role': flags.authorisedBy !== undefined ? flags.role : undefined,
      'authorised_by.session_id': flags.authorisedBy !== undefined ? flags.sessionId : undefined,
      tool_name: toolName,
    };
    const malformed = issues.find((found) => outsideFlagDomain(found) && given[found.path] !== undefined);
    if (malformed) throw new UsageError(describeAttestationIssues(issues, given), { field: FLAG_FOR_PATH[malformed.path] ?? malformed.path });
    throw new DataError(describeAttestationIssues(issues), { code: 'validation_error', field: issues[0].path });
  }
  if (signing) Object.assign(record, signWitness(record as unknown as Record<string, unknown>, await signing.workspaceId(), signing.key));
  return record;
}

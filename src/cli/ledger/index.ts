/**
 * `govctl ledger`: check the workspace's transparency log (docs/ledger.md).
 * - `key`: the log's verifier key as the service states it (pin it out of band);
 * - `checkpoint`: the latest checkpoint, verified with the pinned key;
 * - `prove <id>`: a record is in the log exactly as the service returns it;
 * - `verify --state FILE`: the log only grew since the checkpoint kept in FILE (the scheduled check).
 * A check that fails exits 2 and names what failed (LedgerCheckError).
 */
import { terminalText } from '../terminal-text.js';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Argument, Command, Option } from 'commander';
import { addExamples } from '../command-kit.js';
import { CosignatureSigner, SigningKey } from '../../core/index.js';
import { ConfigError, DataError, InputFileError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { plural, printFields, printJson } from '../render.js';
import { displayPath } from '../settings.js';
import {
  auditLog,
  checkConsistency,
  checkpointSummary,
  fetchCheckpoint,
  openVerified,
  proveRecord,
  requireCosignatures,
  type AuditReport,
} from '../../client/verify/index.js';
import { startProgress } from '../progress.js';
import { LedgerCheckError, logVerifier, pinnedLogKey, witnessVerifiers } from './checks.js';

export function createLedgerCommand(factory: Factory): Command {
  const key = new Command('key').description("print the log's verifier key as the service states it (GET ledger/key)").action(async () => runKey(factory));
  const checkpoint = new Command('checkpoint')
    .description('print the latest checkpoint, verified with the pinned log key (--ledger-key)')
    .action(async () => runCheckpoint(factory));
  const prove = new Command('prove')
    .description('prove that a record (evidence or attestation id) is in the log exactly as the service returns it')
    .addArgument(new Argument('<id>', 'a record id (rec_…) or attestation id (att_…)'))
    .action(async (id: string) => runProve(id, factory));
  const verify = new Command('verify')
    .description('check that the log only grew since the checkpoint kept in a state file, then keep the new one')
    .requiredOption('--state <file>', 'where the last verified checkpoint is kept (created on first run)')
    .addOption(new Option('--witness <vkey...>', 'require a cosignature by this witness (repeatable)'))
    .action(async (flags: { state: string; witness?: string[] }) => runVerify({ state: flags.state, witnesses: flags.witness ?? [] }, factory));
  const audit = new Command('audit')
    .description('check the whole log: every entry, every record against its entry, the root, and posture and gates recomputed from the records')
    .action(async () => runAudit(factory));
  const cosign = new Command('cosign')
    .description('act as a witness: check the log grew consistently since the last cosigned checkpoint, cosign it and submit the cosignature')
    .requiredOption('--witness-key <file>', "the witness's Ed25519 key (64 hex digits, `govctl signing-key generate`)")
    .requiredOption('--witness-name <name>', 'the witness name, e.g. witness.example/w1 (the operator registers its key with `govctl admin witness add`)')
    .option('--state <file>', 'where the last cosigned checkpoint is kept (created on first run; required unless --print-key)')
    .option('--print-key', 'only print the witness verifier key, to give the log operator (`govctl admin witness add --key`)')
    .action(async (flags: { witnessKey: string; witnessName: string; state?: string; printKey?: boolean }) => {
      if (flags.state === undefined && flags.printKey !== true) throw new UsageError('ledger cosign needs --state FILE', { field: '--state' });
      return runCosign({ ...flags, state: flags.state ?? '' }, factory);
    });
  const command = new Command('ledger')
    .description("check the workspace's transparency log: checkpoints, inclusion and consistency proofs")
    .addCommand(addExamples(key, ['govctl ledger key']))
    .addCommand(addExamples(checkpoint, ['govctl ledger checkpoint --ledger-key "$(cat ledger.vkey)"', 'GOVCTL_LEDGER_KEY=… govctl ledger checkpoint --json']))
    .addCommand(addExamples(prove, ['govctl ledger prove rec_01234567-…', 'govctl ledger prove att_… --json']))
    .addCommand(addExamples(audit, ['govctl ledger audit --ledger-key "$(cat ledger.vkey)"', 'govctl ledger audit --json | jq .problems']))
    .addCommand(addExamples(cosign, ['govctl ledger cosign --witness-key witness.key --witness-name witness.example/w1 --state witness-state.json']))
    .addCommand(
      addExamples(verify, [
        'govctl ledger verify --state ledger-state.json',
        'govctl ledger verify --state ledger-state.json --witness "witness.example/w1+aa4a09d1+BOpK…"',
      ]),
    );
  command.addHelpText(
    'after',
    '\nPin the log key printed by `govctl admin init` with --ledger-key, GOVCTL_LEDGER_KEY or ledgerKey in a config\n' +
      'file. Exit codes: 0 everything verified, 2 a check failed (the message names it), 78 no or a malformed pinned key.\n',
  );
  return command;
}

async function runAudit(factory: Factory): Promise<void> {
  const log = await pinnedLogKey(factory);
  const api = await factory.api();
  // Progress on a terminal only: first the log's leaves, then the records checked against them.
  const progress = await startProgress(factory, {
    label: 'auditing',
    total: undefined,
    unit: 'items',
    detail: '{phase}',
    fields: { phase: 'reading the log' },
  });
  let report: AuditReport;
  try {
    report = await auditLog({
      api,
      log,
      workspaceId: await factory.workspaceId(),
      nowMs: () => factory.clock().getTime(),
      signingKey: await factory.signingKey(),
      onProgress: ({ phase, done, total }) => {
        progress.update(done, { phase: phase === 'log' ? `of ${total} leaves read` : `of ${total} records checked` });
      },
    });
  } finally {
    progress.stop();
  }
  if (factory.globals.json === true) await printJson(factory.io.stdout, { ...report, verified: report.problems.length === 0 });
  else {
    // the service's figure beside the one recomputed from the verified records
    const beside = (service: string | number | boolean | null, verified: string | number | boolean, unit = '') =>
      `service ${service === null ? '(none)' : `${String(service)}${unit}`}, verified ${String(verified)}${unit}${service === verified ? '' : '  (differ)'}`;
    await printFields(factory.io.stdout, [
      ['origin', terminalText(report.origin)],
      ['tree_size', report.tree_size],
      ['root_hash', report.root_hash],
      ['records', `${report.records} (${report.evidence} evidence, ${plural(report.attestations, 'attestation')})`],
      ['verdicts', report.verdicts],
      ['client_sig_unchecked', report.client_sig_unchecked === 0 ? 0 : `${report.client_sig_unchecked} (configure the signing key to check them)`],
      ['logged_after_checkpoint', report.logged_after_checkpoint],
      ['policy', report.policy],
      ['overall_pct', beside(report.posture.overall_pct.service, report.posture.overall_pct.verified, ' %')],
      ...report.posture.frameworks.map(({ framework, service, verified }): [string, string] => {
        const gate = report.gates.find((g) => g.framework === framework)!;
        return [framework, `${beside(service, verified, ' %')}; gate (${gate.mode}, ≥ ${gate.threshold_pct} %) ${beside(gate.service, gate.verified)}`];
      }),
      ['passed', beside(report.passed.service, report.passed.verified)],
      ['problems', report.problems.length === 0 ? 'none' : String(report.problems.length)],
    ]);
    for (const problem of report.problems) await factory.io.stdout.write(`problem\t${terminalText(problem)}\n`);
  }
  if (report.problems.length > 0) {
    throw new LedgerCheckError(
      `the audit found ${report.problems.length === 1 ? 'a problem' : `${report.problems.length} problems`}: ${terminalText(report.problems[0])}${report.problems.length > 1 ? ' (all are listed on stdout)' : ''}`,
    );
  }
}

async function runKey(factory: Factory): Promise<void> {
  const api = await factory.api();
  const key = (await api.workspaceText('GET', 'ledger/key')).body.trim();
  const settings = await factory.settings();
  const pinned = settings.ledgerKey?.trim();
  if (factory.globals.json === true) return printJson(factory.io.stdout, { verifier_key: key, matches_pinned: pinned === undefined ? null : pinned === key });
  await factory.io.stdout.write(`${terminalText(key)}\n`);
  if (pinned !== undefined && pinned !== key) await factory.warn('this is not the pinned log key (--ledger-key): the service signs with another key');
}

async function runCheckpoint(factory: Factory): Promise<void> {
  const log = await pinnedLogKey(factory);
  const api = await factory.api();
  const { note, opened } = await fetchCheckpoint(api, log);
  const summary = checkpointSummary(opened);
  if (factory.globals.json === true) return printJson(factory.io.stdout, { ...summary, note });
  await printFields(factory.io.stdout, [
    ['origin', terminalText(summary.origin)],
    ['tree_size', summary.tree_size],
    ['root_hash', summary.root_hash],
    ['other_signatures', terminalText(summary.other_signatures.join(', '))],
  ]);
}

async function runProve(id: string, factory: Factory): Promise<void> {
  const log = await pinnedLogKey(factory);
  const api = await factory.api();
  const proven = await proveRecord(api, log, id, await factory.workspaceId());
  if (factory.globals.json === true) return printJson(factory.io.stdout, { ...proven, verified: true });
  await printFields(factory.io.stdout, [
    ['id', terminalText(proven.id)],
    ['kind', proven.kind],
    ['leaf_index', proven.leaf_index],
    ['tree_size', proven.tree_size],
    ['origin', terminalText(proven.origin)],
    ['root_hash', proven.root_hash],
    ['verified', 'the record as returned is the logged entry, included in the signed checkpoint'],
  ]);
}

/** What `ledger verify` keeps between runs. */
interface LedgerState {
  /** the log key the state was pinned to (the first one seen without --ledger-key) */
  verifier_key: string;
  /** the last checkpoint that verified (note text) */
  checkpoint: string;
}

async function readState(file: string): Promise<LedgerState | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InputFileError(`cannot read the state file ${displayPath(file)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { field: '--state' });
  }
  try {
    const value = JSON.parse(text) as Partial<LedgerState>;
    if (typeof value.verifier_key === 'string' && typeof value.checkpoint === 'string')
      return { verifier_key: value.verifier_key, checkpoint: value.checkpoint };
  } catch {
    // answered below
  }
  throw new DataError(`${displayPath(file)} is not a govctl ledger state file`, {
    field: '--state',
    hint: 'give the file an earlier `govctl ledger verify --state` wrote, or a new path',
  });
}

async function writeState(file: string, state: LedgerState): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o644 });
  await rename(temporary, file);
}

/** The state file's checkpoint advanced to the service's current one, every check done; nothing written yet. */
async function advance(file: string, witnesses: ReturnType<typeof witnessVerifiers>, factory: Factory) {
  const settings = await factory.settings();
  const state = await readState(file);
  const api = await factory.api();

  // The key: pinned by the setting, else by the state file, else the first one seen (then kept).
  let vkey: string;
  let firstUse = false;
  if (settings.ledgerKey !== undefined) {
    vkey = settings.ledgerKey.trim();
    if (state && state.verifier_key !== vkey) {
      throw new LedgerCheckError(`the state file ${displayPath(file)} was pinned to another log key (${terminalText(state.verifier_key)})`, {
        hint: 'the log key changed: after checking the rotation with the operator, start a new state file',
      });
    }
  } else if (state) vkey = state.verifier_key;
  else {
    vkey = (await api.workspaceText('GET', 'ledger/key')).body.trim();
    firstUse = true;
  }
  const log = logVerifier(vkey, state && settings.ledgerKey === undefined ? `the verifier_key of ${displayPath(file)}` : 'the log key');

  const { note, opened } = await fetchCheckpoint(api, log, witnesses);
  requireCosignatures(opened, witnesses);
  let previous: number | null = null;
  if (state) {
    const old = openVerified(state.checkpoint, log, [], `the checkpoint kept in ${displayPath(file)}`);
    await checkConsistency(api, old, opened);
    previous = old.checkpoint.size;
  }
  // Trust on first use: the user should compare the key, so it is said even with --json or --quiet.
  if (firstUse)
    await factory.warn(`pinned the log key ${terminalText(vkey)} in ${displayPath(file)} (first use: compare it with the one the operator gave you)`);
  return { api, vkey, note, opened, previous };
}

export async function runVerify(options: { state: string; witnesses: readonly string[] }, factory: Factory): Promise<void> {
  const file = resolve(factory.cwd, options.state);
  const { vkey, note, opened, previous } = await advance(file, witnessVerifiers(options.witnesses), factory);
  await writeState(file, { verifier_key: vkey, checkpoint: note });
  const { origin, size, rootHash } = opened.checkpoint;
  if (factory.globals.json === true) {
    return printJson(factory.io.stdout, {
      origin,
      tree_size: size,
      root_hash: rootHash.toString('base64'),
      previous_size: previous,
      cosigned_by: opened.cosignatures.map((c) => c.name),
      verified: true,
    });
  }
  await printFields(factory.io.stdout, [
    ['origin', terminalText(origin)],
    ['tree_size', size],
    ['root_hash', rootHash.toString('base64')],
    ['previous_size', previous ?? ''],
    ['cosigned_by', opened.cosignatures.map((c) => c.name).join(', ')],
    [
      'verified',
      previous === null
        ? 'signature (first checkpoint kept)'
        : previous === size
          ? 'signature; unchanged since the last run'
          : `signature; consistent with size ${previous}`,
    ],
  ]);
}

/**
 * `ledger cosign`: act as a witness. The same checks as `verify` against the witness's own state
 * file (the last checkpoint it cosigned), then a tlog-cosignature v1 line on the checkpoint,
 * submitted to the service; the state advances only once the service accepted it.
 */
export async function runCosign(options: { state: string; witnessKey: string; witnessName: string; printKey?: boolean }, factory: Factory): Promise<void> {
  const keyFile = resolve(factory.cwd, options.witnessKey);
  let key: SigningKey;
  try {
    key = SigningKey.fromHex((await readFile(keyFile, 'utf8')).trim(), `--witness-key ${displayPath(keyFile)}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== undefined)
      throw new InputFileError(`cannot read the witness key ${displayPath(keyFile)}`, { field: '--witness-key' });
    throw new ConfigError(`--witness-key ${displayPath(keyFile)} is not a signing key (64 hex digits, as \`govctl signing-key generate\` writes)`, {
      field: '--witness-key',
    });
  }
  let signer: CosignatureSigner;
  try {
    signer = new CosignatureSigner(options.witnessName, key, () => factory.clock().getTime() / 1000);
  } catch (error) {
    throw new UsageError(`--witness-name: ${(error as Error).message}`, { field: '--witness-name' });
  }
  if (options.printKey === true) {
    await factory.io.stdout.write(`${signer.verifierKey}\n`);
    return;
  }
  const file = resolve(factory.cwd, options.state);
  const { api, vkey, note, opened, previous } = await advance(file, [], factory);
  const line = signer.cosign(opened.body);
  await api.workspaceText('POST', 'ledger/cosignatures', { checkpoint: note + line });
  await writeState(file, { verifier_key: vkey, checkpoint: note });
  const { origin, size } = opened.checkpoint;
  if (factory.globals.json === true) {
    return printJson(factory.io.stdout, {
      origin,
      tree_size: size,
      previous_size: previous,
      witness: signer.name,
      witness_key: signer.verifierKey,
      cosigned: true,
    });
  }
  await printFields(factory.io.stdout, [
    ['origin', terminalText(origin)],
    ['tree_size', size],
    ['previous_size', previous ?? ''],
    ['witness_key', signer.verifierKey],
    ['cosigned', previous === null ? 'the first checkpoint seen' : `consistent with size ${previous}, cosigned and submitted`],
  ]);
}

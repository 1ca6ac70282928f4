/**
 * The transparency-log tools of `govctl mcp` (docs/ledger.md): `ledger_checkpoint` and
 * `ledger_prove`, on the very checks `govctl ledger checkpoint` and `govctl ledger prove` run
 * (src/client/verify). What differs is where the log key comes from: the pinned `ledgerKey`
 * setting when there is one, as in the CLI; otherwise the key the service states, trusted on first
 * use and kept for this server's lifetime (an agent has no state file to pin it in), and every
 * result says which of the two it was.
 */
import type { Ed25519NoteVerifier } from '../../core/index.js';
import type { Factory } from '../factory.js';
import { checkpointSummary, fetchCheckpoint, proveRecord } from '../../client/verify/index.js';
import { configuredLogKey, LedgerCheckError, logVerifier } from '../ledger/checks.js';
import { terminalText } from '../terminal-text.js';
import { READ, type Tool } from './tools.js';

/** How the log key was chosen. */
type KeyTrust = 'pinned' | 'first_use';

/** What a result says about the key that verified it. */
function describeKey(log: Ed25519NoteVerifier, trust: KeyTrust): Record<string, unknown> {
  return {
    verifier_key: log.verifierKey,
    trust,
    ...(trust === 'first_use'
      ? {
          caution:
            "no log key is pinned: this is the key the service states, trusted on first use. It shows the service signs one consistent log, not that the key is the operator's; pin the key the operator gives you (ledgerKey setting, GOVCTL_LEDGER_KEY)",
        }
      : {}),
  };
}

/**
 * The log key of each workspace as first stated by the service, for this server's lifetime (one per
 * process, shared by every call and, with --http, every request). A different key later is refused.
 */
function createKeyChooser() {
  const firstSeen = new Map<string, string>();
  return async function chooseKey(deps: Factory): Promise<{ log: Ed25519NoteVerifier; trust: KeyTrust; keep(): void }> {
    const pinned = await configuredLogKey(deps);
    if (pinned !== undefined) return { log: pinned, trust: 'pinned', keep: () => undefined };
    const workspace = await deps.workspaceId();
    const stated = (await (await deps.api()).workspaceText('GET', 'ledger/key')).body.trim();
    const kept = firstSeen.get(workspace);
    if (kept !== undefined && kept !== stated) {
      throw new LedgerCheckError(
        `the service now states the log key ${terminalText(stated)}, not ${terminalText(kept)} which it stated first in this session`,
        {
          hint: 'the log key changed (a rotation, or another signer): check with the operator, then pin the right key with the ledgerKey setting (GOVCTL_LEDGER_KEY) and restart govctl mcp',
        },
      );
    }
    let log: Ed25519NoteVerifier;
    try {
      log = logVerifier(stated, 'the key the service states');
    } catch (error) {
      throw new LedgerCheckError((error as Error).message, {
        hint: 'the service states no usable log key; pin the key the operator gives you (GOVCTL_LEDGER_KEY)',
      });
    }
    // Kept only once a check with it succeeded, as `ledger verify --state` keeps its first key.
    return { log, trust: 'first_use', keep: () => firstSeen.set(workspace, stated) };
  };
}

/** The two ledger tools, sharing one first-use key memory. */
export function createLedgerTools(): Tool[] {
  const chooseKey = createKeyChooser();

  const checkpoint: Tool = {
    name: 'ledger_checkpoint',
    description:
      "The latest signed checkpoint of the workspace's transparency log (its size and root hash), verified with the pinned log key (the ledgerKey setting), " +
      'or, when none is pinned, with the key the service states, trusted on first use (the result says which: log_key.trust). ' +
      'A checkpoint that does not verify is a tool error naming why.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { title: 'Ledger checkpoint', ...READ },
    async run(_args, deps) {
      const key = await chooseKey(deps);
      const { note, opened } = await fetchCheckpoint(await deps.api(), key.log);
      key.keep();
      return { ...checkpointSummary(opened), verified: true, log_key: describeKey(key.log, key.trust), note };
    },
  };

  const prove: Tool = {
    name: 'ledger_prove',
    description:
      'Prove that a stored evidence record or attestation is in the transparency log exactly as the service returns it now: ' +
      "the checkpoint verifies with the log key, the inclusion proof leads from the record's log entry to the checkpoint's root, " +
      'and the entry commits to the SHA-256 of the whole record (every member). Returns the leaf index, tree size and root, and whether the key was pinned. ' +
      'A changed, deleted or unlogged record is a tool error naming the problem. A record written less than a second ago is waited for (the log integrates within 1 s).',
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, description: 'a record_id (from record_* or list_evidence) or an attestation_id (from push_attestation)' },
      },
      required: ['id'],
      additionalProperties: false,
      examples: [{ id: 'rec_0b8c5f0e-0000-4000-8000-000000000000' }],
    },
    annotations: { title: 'Ledger inclusion proof', ...READ },
    async run(args, deps) {
      const id = String(args.id);
      const key = await chooseKey(deps);
      const proven = await proveRecord(await deps.api(), key.log, id, await deps.workspaceId());
      key.keep();
      return {
        ...proven,
        verified: true,
        proven: `${proven.kind} ${proven.id}, exactly as the service returns it now, is leaf ${proven.leaf_index} of the log's tree of size ${proven.tree_size}, whose root the ${key.trust === 'pinned' ? 'pinned' : 'first-use'} log key signed`,
        log_key: describeKey(key.log, key.trust),
      };
    },
  };

  return [checkpoint, prove];
}

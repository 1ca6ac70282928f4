/**
 * Administration of a service database, behind `govctl admin` (cli.md): provision an
 * organisation, workspace, user and first API key; create, list and revoke API keys; set the
 * gate policy of a workspace; register and revoke its verifying keys and set its key policy;
 * register and revoke the witnesses of its log. Each call opens the store at a location (a SQLite
 * file, or a database URL: store/open-store.ts), does its work through the store interface and
 * closes it, so it is safe beside a running `govctl serve` on the same database (SQLite: WAL).
 * API keys appear in clear only in what `provision` and `createApiKey` return.
 */
import {
  FRAMEWORKS,
  gatePolicySources,
  keyFingerprint,
  validateGatePolicy,
  type Framework,
  type GateMode,
  type GatePolicyChange,
  type GatePolicyEdit,
} from '../core/index.js';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { DEFAULT_LOG_ORIGIN_PREFIX, Ed25519NoteSigner, generateSignerKey, ledgerOrigin, parseSignerKey } from '../core/index.js';
import type { SigningKey } from '../core/signing/keys.js';
import { describeIssues } from './errors.js';
import { checkWitnessKey } from './ledger/notes.js';
import { openStore } from './store/open-store.js';
import {
  API_KEY_ROLES,
  KEY_POLICIES,
  type ApiKeyInfo,
  type ApiKeyRole,
  type CreatedApiKey,
  type KeyPolicy,
  type ProvisionOptions,
  type Provisioned,
  type SigningKeyInfo,
  type WitnessInfo,
} from './store/rows.js';
import type { Store } from './store/store.js';

export type { ApiKeyInfo, ApiKeyRole, CreatedApiKey, KeyPolicy, ProvisionOptions, Provisioned, SigningKeyInfo, WitnessInfo };
export { API_KEY_ROLES, KEY_POLICIES };

/** An admin request that cannot be done: `not_found` (no such workspace or key) or `invalid` (a bad value, named by `field`). */
export class AdminError extends Error {
  override readonly name = 'AdminError';
  constructor(
    readonly code: 'not_found' | 'invalid',
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Opens the store at `location` for one piece of work, and closes it. */
async function withStore<T>(location: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(location);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * Adds an organisation with one workspace, one user and one API key. Every call adds another.
 *
 * @example const { workspace_id, api_key } = await provision('govctl.db', { orgName: 'Acme' });
 */
export function provision(location: string, options: ProvisionOptions = {}): Promise<Provisioned> {
  return withStore(location, async (store) => {
    const now = Date.now();
    const provisioned = await store.identity.provision(options, now);
    // The policy it starts with, logged as its first gate_policy change.
    await store.gatePolicy.latest(provisioned.workspace_id, now);
    return provisioned;
  });
}

export interface CreateApiKeyOptions {
  workspaceId: string;
  /** a label for listings */
  name?: string;
  /** when the key stops working (default: never) */
  expiresAt?: Date | string;
  /** what it may do in its workspace (docs/security.md, "API key roles"); default `writer` */
  role?: ApiKeyRole;
}

function expiryMs(expiresAt: Date | string | undefined): number | null {
  if (expiresAt === undefined) return null;
  const ms = expiresAt instanceof Date ? expiresAt.getTime() : Date.parse(expiresAt);
  if (Number.isNaN(ms)) throw new AdminError('invalid', 'expiresAt must be an ISO 8601 date and time', 'expiresAt');
  return ms;
}

/**
 * A new API key for a workspace; the returned `api_key` is the only time the key is shown.
 * @throws AdminError `not_found` for an unknown workspace, `invalid` for a bad expiry
 */
export async function createApiKey(location: string, options: CreateApiKeyOptions): Promise<CreatedApiKey> {
  const expires = expiryMs(options.expiresAt);
  const role = options.role ?? 'writer';
  if (!API_KEY_ROLES.includes(role)) throw new AdminError('invalid', `role must be one of: ${API_KEY_ROLES.join(', ')}`, 'role');
  return withStore(location, async (store) => {
    const created = await store.identity.createApiKey(options.workspaceId, options.name ?? null, expires, Date.now(), role);
    if (!created) throw new AdminError('not_found', `no workspace ${options.workspaceId} in this database`, 'workspaceId');
    return created;
  });
}

/** Every API key (of one workspace, when given): ids, prefixes, dates, revocation; never the keys. */
export function listApiKeys(location: string, options: { workspaceId?: string } = {}): Promise<ApiKeyInfo[]> {
  return withStore(location, (store) => store.identity.listApiKeys(options.workspaceId));
}

/**
 * Revokes an API key at once; revoking it again changes nothing.
 * @throws AdminError `not_found` for an unknown key id
 */
export function revokeApiKey(location: string, keyId: string): Promise<ApiKeyInfo> {
  return withStore(location, async (store) => {
    const key = await store.identity.revokeApiKey(keyId, Date.now());
    if (!key) throw new AdminError('not_found', `no API key ${keyId} in this database`, 'keyId');
    return key;
  });
}

/** One framework's gate rule as it applies to a workspace, and whether the workspace set it. */
export interface GatePolicyEntry {
  framework: Framework;
  mode: GateMode;
  threshold: number;
  source: 'workspace' | 'default';
}

export interface SetGatePolicyOptions {
  workspaceId: string;
  framework: Framework;
  /** `required` (blocking) or `advisory`; default: the rule's current mode */
  mode?: GateMode;
  /** percent from 0 to 100; default: the rule's current threshold */
  threshold?: number;
  /** who makes the change, as the log records it (`changed_by`); default `admin` */
  changedBy?: string;
}

/** Who an admin change is by when the caller does not say. */
const ADMIN_CHANGED_BY = 'admin';

/** Every framework's rule in force (the latest logged change's) and whether the workspace set it. */
function policyEntries(changes: readonly GatePolicyChange[]): GatePolicyEntry[] {
  const policy = changes[changes.length - 1].policy;
  const sources = gatePolicySources(changes);
  return FRAMEWORKS.map((framework) => ({ framework, ...policy[framework], source: sources[framework] }));
}

async function requireWorkspace(store: Store, workspaceId: string, field = 'workspaceId'): Promise<void> {
  if (!(await store.identity.workspaceExists(workspaceId))) throw new AdminError('not_found', `no workspace ${workspaceId} in this database`, field);
}

/** Logs a gate policy change (docs/ledger.md) and answers the workspace's whole policy afterwards. */
async function changePolicy(location: string, workspaceId: string, edit: GatePolicyEdit): Promise<GatePolicyEntry[]> {
  return withStore(location, async (store) => {
    await requireWorkspace(store, workspaceId);
    const now = Date.now();
    if ((await store.gatePolicy.change(workspaceId, edit, now)) === null)
      throw new AdminError('not_found', `no workspace ${workspaceId} in this database`, 'workspaceId');
    return policyEntries(await store.gatePolicy.changes(workspaceId, now));
  });
}

/** The `changed_by` of an admin change: a non-empty name of at most 256 characters. */
function changedByOf(value: string | undefined): string {
  const name = (value ?? ADMIN_CHANGED_BY).trim();
  if (name.length === 0 || name.length > 256) throw new AdminError('invalid', 'who changes the policy is named in 1 to 256 characters', 'changedBy');
  return name;
}

/**
 * Sets one framework's gate for a workspace (other frameworks keep theirs); the change is logged
 * as a `gate_policy` leaf of the workspace's transparency log.
 * @returns the workspace's whole policy afterwards
 * @throws AdminError `invalid` for an unknown framework, mode or a threshold outside 0–100; `not_found` for an unknown workspace
 */
export async function setGatePolicy(location: string, options: SetGatePolicyOptions): Promise<GatePolicyEntry[]> {
  const rule: Record<string, unknown> = {};
  if (options.mode !== undefined) rule.mode = options.mode;
  if (options.threshold !== undefined) rule.threshold = options.threshold;
  const issues = validateGatePolicy({ [options.framework]: rule }, '');
  if (issues.length > 0) {
    // Paths come as `<framework>.mode`; name the option instead.
    const last = issues[0].path.split('.').pop();
    throw new AdminError('invalid', describeIssues(issues), last === 'mode' || last === 'threshold' ? last : 'framework');
  }
  return changePolicy(location, options.workspaceId, { action: 'set', changedBy: changedByOf(options.changedBy), framework: options.framework, rule });
}

/** Puts one framework's gate of a workspace back to the default; the change is logged as {@link setGatePolicy}'s. */
export async function resetGatePolicy(
  location: string,
  options: { workspaceId: string; framework: Framework; changedBy?: string },
): Promise<GatePolicyEntry[]> {
  if (!FRAMEWORKS.includes(options.framework)) throw new AdminError('invalid', `framework must be one of: ${FRAMEWORKS.join(', ')}`, 'framework');
  return changePolicy(location, options.workspaceId, { action: 'unset', changedBy: changedByOf(options.changedBy), framework: options.framework });
}

/** A workspace's gate policy: every framework, its own rule or the default. */
export function getGatePolicy(location: string, options: { workspaceId: string }): Promise<GatePolicyEntry[]> {
  return withStore(location, async (store) => {
    await requireWorkspace(store, options.workspaceId);
    return policyEntries(await store.gatePolicy.changes(options.workspaceId, Date.now()));
  });
}

/** A workspace's logged gate policy changes, oldest first (what `GET …/grc/gates/policy` lists). */
export function gatePolicyChanges(location: string, options: { workspaceId: string }): Promise<GatePolicyChange[]> {
  return withStore(location, async (store) => {
    await requireWorkspace(store, options.workspaceId);
    return store.gatePolicy.changes(options.workspaceId, Date.now());
  });
}

// ---- The transparency log's key and witnesses (issue 12, docs/ledger.md) ----------------------

/** The log key file `govctl admin init` writes beside a database and `govctl serve` reads by default. */
export function ledgerKeyPath(dbPath: string): string {
  return `${dbPath}.ledger-key`;
}

/**
 * Creates a log key file (mode 0600, never overwritten): one Ed25519 signer key in the signed-note
 * spelling `PRIVATE+KEY+<name>+<key id>+<key>`. Its seed signs every workspace's checkpoints under
 * the key name `<origin prefix>/<workspace_id>`; the name in the file is the prefix it was made for.
 * @throws AdminError `invalid` when the file exists (rotation is a new file, docs/ledger.md)
 */
export function createLedgerKey(file: string, originPrefix = DEFAULT_LOG_ORIGIN_PREFIX): { file: string } {
  const { signerKey } = generateSignerKey(originPrefix.replace(/\/+$/, ''));
  try {
    writeFileSync(file, `${signerKey}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new AdminError('invalid', `the log key file ${file} exists already; it is never overwritten`, 'log-key');
    throw error;
  }
  chmodSync(file, 0o600);
  return { file };
}

/** The log key file is missing, unreadable, readable by others or not a signer key. */
export class LedgerKeyError extends Error {
  override readonly name = 'LedgerKeyError';
}

/**
 * Reads a log key file: it must exist, be readable by its owner only, and hold one signer key.
 * The error never quotes the file's content.
 * @throws LedgerKeyError
 */
export function readLedgerKey(file: string): SigningKey {
  let text: string;
  try {
    if ((statSync(file).mode & 0o077) !== 0) throw new LedgerKeyError(`the log key file ${file} is readable by others: chmod 600 it`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof LedgerKeyError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new LedgerKeyError(code === 'ENOENT' ? `no log key file ${file}` : `cannot read the log key file ${file} (${code ?? 'error'})`);
  }
  try {
    return parseSignerKey(text).key;
  } catch (error) {
    throw new LedgerKeyError(`${file} is not a log key file (${(error as Error).message})`);
  }
}

/** Each workspace's log verifier key (`<origin>+<key id>+<key>`), what an auditor pins. */
export function ledgerVerifierKeys(
  location: string,
  key: SigningKey,
  originPrefix = DEFAULT_LOG_ORIGIN_PREFIX,
): Promise<{ workspace_id: string; verifier_key: string }[]> {
  return withStore(location, async (store) =>
    (await store.identity.workspaceIds()).map((workspaceId) => ({
      workspace_id: workspaceId,
      verifier_key: new Ed25519NoteSigner(ledgerOrigin(originPrefix, workspaceId), key).verifierKey,
    })),
  );
}

/**
 * Registers a witness's verifier key (type 0x04, tlog-cosignature) for a workspace; its name is
 * the key's name. Registering a name again replaces its key (and un-revokes it).
 * @throws AdminError `invalid` for a key that is not a witness verifier key or a name that does not match it; `not_found` for an unknown workspace
 */
export async function addWitness(location: string, options: { workspaceId: string; key: string; name?: string }): Promise<WitnessInfo> {
  let witness: { name: string; vkey: string };
  try {
    witness = checkWitnessKey(options.key);
  } catch (error) {
    throw new AdminError('invalid', (error as Error).message, 'key');
  }
  if (options.name !== undefined && options.name !== witness.name)
    throw new AdminError('invalid', `the witness name ${options.name} is not the key's name ${witness.name}`, 'name');
  return withStore(location, async (store) => {
    const added = await store.ledger.addWitness(options.workspaceId, witness.name, witness.vkey, Date.now());
    if (added === null) throw noWorkspace(options.workspaceId);
    return added;
  });
}

/** The witnesses registered (for one workspace, when given), revoked ones included. */
export function listWitnesses(location: string, options: { workspaceId?: string } = {}): Promise<WitnessInfo[]> {
  return withStore(location, async (store) => {
    const witnesses = await store.ledger.listWitnesses(options.workspaceId);
    if (witnesses === null) throw noWorkspace(options.workspaceId!);
    return witnesses;
  });
}

/** An unknown workspace, in the witness commands (whose option is `workspace`). */
function noWorkspace(workspaceId: string): AdminError {
  return new AdminError('not_found', `no workspace ${workspaceId} in this database`, 'workspace');
}

/**
 * Revokes a witness: its cosignatures are no longer accepted (those already held are still served).
 * @throws AdminError `not_found` for an unknown workspace or witness
 */
export function revokeWitness(location: string, options: { workspaceId: string; name: string }): Promise<WitnessInfo> {
  return withStore(location, async (store) => {
    if (!(await store.identity.workspaceExists(options.workspaceId))) throw noWorkspace(options.workspaceId);
    const revoked = await store.ledger.revokeWitness(options.workspaceId, options.name, Date.now());
    if (revoked === null) throw new AdminError('not_found', `no witness ${options.name} for workspace ${options.workspaceId}`, 'name');
    return revoked;
  });
}

// ---- Verifying keys and the key policy of a workspace (docs/security.md) ----------------------

/** A workspace's verifying keys and its key policy (docs/security.md). */
export interface SigningKeyRegistry {
  workspace_id: string;
  policy: KeyPolicy;
  keys: SigningKeyInfo[];
}

function publicKeyOf(hex: string): string {
  const key = hex.trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(key)) throw new AdminError('invalid', 'the public key must be an Ed25519 public key: 64 hex characters', 'public-key');
  return key;
}

async function registryOf(store: Store, workspaceId: string): Promise<SigningKeyRegistry> {
  return { workspace_id: workspaceId, policy: await store.signingKeys.policy(workspaceId), keys: await store.signingKeys.list(workspaceId) };
}

/**
 * Registers a verifying key (an Ed25519 public key) for a workspace. Adding an active key again
 * changes nothing; a revoked key stays revoked (make a new key pair instead).
 * @returns the registered key
 * @throws AdminError `not_found` for an unknown workspace, `invalid` for a bad or revoked key
 */
export async function addSigningKey(location: string, options: { workspaceId: string; publicKeyHex: string; name?: string }): Promise<SigningKeyInfo> {
  const publicKey = publicKeyOf(options.publicKeyHex);
  const fingerprint = keyFingerprint(publicKey);
  return withStore(location, async (store) => {
    await requireWorkspace(store, options.workspaceId);
    const keys = store.signingKeys;
    const existing = await keys.get(options.workspaceId, fingerprint);
    if (existing?.revoked_at) {
      throw new AdminError(
        'invalid',
        `the key ${fingerprint} was revoked in this workspace at ${existing.revoked_at}; a revoked key is never reinstated: make a new key pair`,
        'public-key',
      );
    }
    if (!existing) await keys.add(options.workspaceId, fingerprint, publicKey, options.name ?? null, Date.now());
    return (await keys.get(options.workspaceId, fingerprint))!;
  });
}

/**
 * Revokes a workspace's verifying key: from the next request on, its signatures earn `declared`
 * under the `registered` policy. Attestations stored before keep their tier.
 * @throws AdminError `not_found` for an unknown workspace or a key not registered there
 */
export async function revokeSigningKey(location: string, options: { workspaceId: string; publicKeyHex: string }): Promise<SigningKeyInfo> {
  const fingerprint = keyFingerprint(publicKeyOf(options.publicKeyHex));
  return withStore(location, async (store) => {
    await requireWorkspace(store, options.workspaceId);
    const keys = store.signingKeys;
    if (!(await keys.get(options.workspaceId, fingerprint)))
      throw new AdminError('not_found', `no signing key ${fingerprint} in workspace ${options.workspaceId}`, 'public-key');
    await keys.revoke(options.workspaceId, fingerprint, Date.now());
    return (await keys.get(options.workspaceId, fingerprint))!;
  });
}

/** A workspace's key policy and every key it registered (revoked ones too). */
export function listSigningKeys(location: string, options: { workspaceId: string }): Promise<SigningKeyRegistry> {
  return withStore(location, async (store) => {
    await requireWorkspace(store, options.workspaceId);
    return registryOf(store, options.workspaceId);
  });
}

/**
 * Sets a workspace's key policy: `open` (any valid signature earns `witnessed`) or `registered`.
 * Applies from the next request on; attestations stored before keep their tier.
 */
export async function setSigningKeyPolicy(location: string, options: { workspaceId: string; policy: KeyPolicy }): Promise<SigningKeyRegistry> {
  if (!(KEY_POLICIES as readonly string[]).includes(options.policy))
    throw new AdminError('invalid', `the policy must be one of: ${KEY_POLICIES.join(', ')}`, 'policy');
  return withStore(location, async (store) => {
    await requireWorkspace(store, options.workspaceId);
    await store.signingKeys.setPolicy(options.workspaceId, options.policy, Date.now());
    return registryOf(store, options.workspaceId);
  });
}

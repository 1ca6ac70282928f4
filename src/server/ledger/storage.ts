/**
 * What the transparency log (log.ts) needs of a database: the port each backend implements in SQL
 * only. Leaves are stored by the backend's own write path (a record's leaf in the record's
 * transaction); the log reads them and the stored subtree hashes by index, and reads and writes
 * the checkpoint, cosignature and witness rows. `wsKey` is the workspace's small integer key.
 */
import type { NodeId, StoredNode } from '../../core/index.js';
import type { WitnessInfo } from '../store/rows.js';

/** One step of an integration, written in one transaction. */
export interface IntegrationStep {
  /** the integrated size the step starts from: the write is refused when the stored one differs */
  from: number;
  /** the integrated size after it */
  to: number;
  /** the complete subtrees (level ≥ 1) that leaves from..to finish */
  nodes: readonly StoredNode[];
  /** the checkpoint of size `to`, when the step ends an integration and the log signs */
  checkpoint?: { root: Buffer; note: string };
}

export interface LogStorage {
  /** The workspace's key; undefined: no such workspace. */
  workspaceKey(workspaceId: string): Promise<number | undefined>;
  workspaceId(wsKey: number): Promise<string>;

  /** Whether this process may integrate now (a backend with replicas: whichever holds the lease). */
  claimIntegration(): Promise<boolean>;
  /** Gives the claim up (the store's close). */
  releaseIntegration(): Promise<void>;
  /** Workspaces with leaves stored beyond their integrated size. */
  pendingWorkspaces(): Promise<number[]>;
  /** How many leaves are integrated, and how many are stored. */
  sizes(wsKey: number): Promise<{ integrated: number; stored: number }>;
  /** Writes one integration step; false when the integrated size is no longer `from` (or the claim was lost). */
  writeIntegration(wsKey: number, step: IntegrationStep, nowMs: number): Promise<boolean>;

  /** A record's leaf by record id. */
  leafOf(wsKey: number, id: string): Promise<{ leafIndex: number; entry: Buffer } | undefined>;
  /** The entries of leaves from..to-1, in order (fewer when not all are stored). */
  entries(wsKey: number, from: number, to: number): Promise<Buffer[]>;
  /** The entries of the leaves at these indexes, by index (missing ones left out). */
  entriesAt(wsKey: number, indexes: readonly number[]): Promise<Map<number, Buffer>>;
  /** Stored subtree hashes (level ≥ 1), keyed by nodeKey (missing ones left out). */
  hashes(wsKey: number, nodes: readonly NodeId[]): Promise<Map<string, Buffer>>;
  /** Stored subtree hashes of one level, indexes from..to-1, in order (fewer when not all are stored). */
  hashRange(wsKey: number, level: number, from: number, to: number): Promise<Buffer[]>;

  latestCheckpoint(wsKey: number): Promise<{ size: number; note: string } | undefined>;
  checkpointAt(wsKey: number, size: number): Promise<string | undefined>;
  putCheckpoint(wsKey: number, size: number, root: Buffer, note: string, nowMs: number): Promise<void>;
  /** The cosignature lines held for a checkpoint, by witness name. */
  cosignatures(wsKey: number, size: number): Promise<string[]>;
  putCosignatures(wsKey: number, size: number, lines: readonly { name: string; line: string }[], nowMs: number): Promise<void>;

  /** The verifier keys of the workspace's witnesses not revoked, by name. */
  witnessKeys(wsKey: number): Promise<string[]>;
  /** Registers (or replaces and un-revokes) a witness's key; null: no such workspace. */
  addWitness(workspaceId: string, name: string, vkey: string, nowMs: number): Promise<WitnessInfo | null>;
  /** revoked ones included; null: no such workspace */
  listWitnesses(workspaceId?: string): Promise<WitnessInfo[] | null>;
  /** null: no such workspace or witness */
  revokeWitness(workspaceId: string, name: string, nowMs: number): Promise<WitnessInfo | null>;
}

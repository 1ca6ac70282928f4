-- The SQLite store's schema: the one migration, applied to an empty database when it is opened
-- (database.ts, which records it as `user_version` 1). A database of any other version is refused.
--
-- Conventions: every table is STRICT. Times are kept twice where they are sorted or compared: the
-- text as the client sent it (returned unchanged; signatures cover it) and epoch milliseconds
-- (`*_ms`) for ordering. `seq` is the order stored. `ws_key` is a small integer standing for a
-- workspace id in the tables that are written most (workspace_keys).

-- ---- Identity: organisations, workspaces, users, API keys (spec §5; identity.ts) ----------------

CREATE TABLE orgs (
  org_id     TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE workspaces (
  workspace_id TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs (org_id),
  name         TEXT NOT NULL,
  created_ms   INTEGER NOT NULL
) STRICT;

CREATE TABLE users (
  user_id    TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES orgs (org_id),
  email      TEXT,
  created_ms INTEGER NOT NULL
) STRICT;

-- Only a SHA-256 of each key is kept; prefix is its first characters, for listing.
CREATE TABLE api_keys (
  key_id       TEXT PRIMARY KEY,
  key_hash     BLOB NOT NULL UNIQUE,
  prefix       TEXT NOT NULL,
  workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
  user_id      TEXT NOT NULL REFERENCES users (user_id),
  name         TEXT,
  created_ms   INTEGER NOT NULL,
  expires_ms   INTEGER,
  revoked_ms   INTEGER,
  -- reader, writer or admin (docs/security.md, "API key roles")
  role         TEXT NOT NULL DEFAULT 'writer' CHECK (role IN ('reader', 'writer', 'admin'))
) STRICT;
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id);

-- The integer key of each workspace, in the order provisioned.
CREATE TABLE workspace_keys (
  ws_key       INTEGER PRIMARY KEY,
  workspace_id TEXT NOT NULL UNIQUE
) STRICT;

-- ---- Evidence records (spec §2.2; evidence.ts) ------------------------------------------------

-- Append-only: no statement in the service updates or deletes a row.
-- payload is the canonical JSON text of the payload as sent (wire.md §4).
CREATE TABLE evidence (
  seq             INTEGER PRIMARY KEY,
  record_id       TEXT NOT NULL UNIQUE,
  workspace_id    TEXT NOT NULL,
  record_type     TEXT NOT NULL,
  system_name     TEXT NOT NULL,
  identity        TEXT,
  resource        TEXT,
  environment     TEXT,
  occurred_at     TEXT NOT NULL,
  occurred_ms     INTEGER NOT NULL,
  payload         TEXT NOT NULL,
  client_sig      TEXT,
  client_sig_algo TEXT,
  source          TEXT NOT NULL,
  mapped_controls TEXT NOT NULL,
  received_at     TEXT NOT NULL,
  received_ms     INTEGER NOT NULL,
  ws_key          INTEGER
) STRICT;

-- The evidence list's three orders (by time; by system, then time; by type, then time), each a
-- narrow table of its own rather than an index on evidence: written a batch at a time at the end
-- of a group commit, with the records after index_progress merged in at read time (evidence.ts).
CREATE TABLE evidence_by_time (
  ws_key      INTEGER NOT NULL,
  occurred_ms INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  PRIMARY KEY (ws_key, occurred_ms, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE evidence_by_system (
  ws_key      INTEGER NOT NULL,
  system_name TEXT NOT NULL,
  occurred_ms INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  PRIMARY KEY (ws_key, system_name, occurred_ms, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE evidence_by_type (
  ws_key      INTEGER NOT NULL,
  record_type TEXT NOT NULL,
  occurred_ms INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  PRIMARY KEY (ws_key, record_type, occurred_ms, seq)
) STRICT, WITHOUT ROWID;

-- How far derived tables have been brought: every record with seq <= through_seq is in them.
CREATE TABLE index_progress (
  name        TEXT PRIMARY KEY,
  through_seq INTEGER NOT NULL
) STRICT;
INSERT INTO index_progress (name, through_seq) VALUES ('evidence_lists', 0);

-- ---- Attestations (spec §2.5; attestations.ts) -------------------------------------------------

-- Append-only. record is the canonical JSON text of the attestation as sent, signature included.
-- witness_sig holds the 64 bytes of a verified signature, accepted once in the whole service (the
-- unique index below, led by what the signed message says of executed_at: signed_ms).
CREATE TABLE attestations (
  seq             INTEGER PRIMARY KEY,
  attestation_id  TEXT NOT NULL UNIQUE,
  workspace_id    TEXT NOT NULL,
  system_name     TEXT NOT NULL,
  agent_name      TEXT NOT NULL,
  tool_name       TEXT NOT NULL,
  input_hash      TEXT NOT NULL,
  output_hash     TEXT NOT NULL,
  executed_at     TEXT NOT NULL,
  executed_ms     INTEGER NOT NULL,
  record          TEXT NOT NULL,
  witness_form    TEXT CHECK (witness_form IN ('canonical', 'legacy')),
  trust_tier      TEXT NOT NULL,
  source          TEXT NOT NULL,
  received_at     TEXT NOT NULL,
  received_ms     INTEGER NOT NULL,
  witness_sig     BLOB,
  signed_ms       INTEGER,
  key_fingerprint TEXT,
  tier_reason     TEXT
) STRICT;
CREATE UNIQUE INDEX attestations_by_signature ON attestations (signed_ms, witness_sig) WHERE witness_sig IS NOT NULL;
CREATE INDEX attestations_by_time ON attestations (workspace_id, executed_ms);

-- ---- Derived: coverage and systems, kept current as records arrive (coverage.ts, systems.ts) ---

-- Posture and gates never scan evidence: the last time each control was earned.
CREATE TABLE control_coverage (
  workspace_id   TEXT NOT NULL,
  control_id     TEXT NOT NULL,
  last_earned_ms INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, control_id)
) STRICT, WITHOUT ROWID;

-- record_types and controls are JSON array text, sorted.
CREATE TABLE systems (
  workspace_id     TEXT NOT NULL,
  name             TEXT NOT NULL,
  system_id        TEXT NOT NULL UNIQUE,
  registered       INTEGER NOT NULL DEFAULT 0,
  risk_tier        TEXT,
  risk_at_ms       INTEGER,
  last_evidence_ms INTEGER NOT NULL,
  last_attested_ms INTEGER,
  record_count     INTEGER NOT NULL DEFAULT 0,
  record_types     TEXT NOT NULL DEFAULT '[]',
  controls         TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (workspace_id, name)
) STRICT;

-- ---- Policy: gates and verifying keys (gate-policy.ts, signing-keys.ts) ------------------------

-- Before migration 10, a workspace's own gate rules. No longer written: read once, for the first
-- change logged for such a workspace (its defaults), which holds the rules it had.
CREATE TABLE gate_policy (
  workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
  framework    TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('required', 'advisory')),
  threshold    REAL NOT NULL CHECK (threshold BETWEEN 0 AND 100),
  updated_ms   INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, framework)
) STRICT;

-- Every change of a workspace's gate policy, in order, each a gate_policy leaf of its log
-- (docs/ledger.md). record is the change record's canonical JSON exactly as logged; the policy in
-- force is the latest change's.
CREATE TABLE gate_policy_changes (
  seq          INTEGER PRIMARY KEY,
  change_id    TEXT NOT NULL UNIQUE,
  workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
  record       TEXT NOT NULL
) STRICT;
CREATE INDEX gate_policy_changes_by_workspace ON gate_policy_changes (workspace_id, seq);

-- Each workspace's verifying keys (public keys only), by fingerprint. Revoked keys stay listed.
CREATE TABLE signing_keys (
  workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
  fingerprint  TEXT NOT NULL,
  public_key   TEXT NOT NULL,
  name         TEXT,
  created_ms   INTEGER NOT NULL,
  revoked_ms   INTEGER,
  PRIMARY KEY (workspace_id, fingerprint)
) STRICT, WITHOUT ROWID;

-- A workspace without a row has the default policy, 'open'.
CREATE TABLE witness_policy (
  workspace_id TEXT PRIMARY KEY REFERENCES workspaces (workspace_id),
  policy       TEXT NOT NULL CHECK (policy IN ('open', 'registered')),
  updated_ms   INTEGER NOT NULL
) STRICT;

-- ---- Idempotency keys (docs/service.md "Idempotency"; idempotency.ts) --------------------------

-- result is the JSON text of the write's result, replayed for a repeat of the key.
CREATE TABLE idempotency_keys (
  workspace_id TEXT NOT NULL,
  idem_key     TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  result       TEXT NOT NULL,
  created_ms   INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, idem_key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_ms);

-- ---- The transparency log (docs/ledger.md; log-storage.ts, ../../ledger/log.ts) -----------------

-- Per workspace: how many leaves are integrated into the tree (the rest are pending).
CREATE TABLE ledger_state (
  ws_key          INTEGER PRIMARY KEY,
  integrated_size INTEGER NOT NULL
) STRICT;

-- One leaf per stored record, its index assigned in the record's transaction; entry is the leaf's
-- bytes (core/ledger, ledgerEntry), its hash computed when read.
CREATE TABLE ledger_leaves (
  -- the rowid is the key: (ws_key << 40) + leaf_index, so reads by workspace and index are rowid reads
  leaf_key   INTEGER PRIMARY KEY,
  ws_key     INTEGER NOT NULL,
  leaf_index INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  record_id  TEXT NOT NULL,
  entry      BLOB NOT NULL,
  CHECK (leaf_index >= 0 AND leaf_index < 1099511627776 AND leaf_key = (ws_key << 40) + leaf_index)
) STRICT;
CREATE UNIQUE INDEX ledger_leaves_by_record ON ledger_leaves (ws_key, record_id);

-- Complete subtrees above the leaves (level >= 1), stored as integration finishes them.
CREATE TABLE ledger_nodes (
  ws_key INTEGER NOT NULL,
  level  INTEGER NOT NULL,
  idx    INTEGER NOT NULL,
  hash   BLOB NOT NULL,
  PRIMARY KEY (ws_key, level, idx)
) STRICT, WITHOUT ROWID;

-- Signed checkpoints (signed notes), one per integrated size.
CREATE TABLE ledger_checkpoints (
  ws_key    INTEGER NOT NULL,
  tree_size INTEGER NOT NULL,
  root      BLOB NOT NULL,
  note      TEXT NOT NULL,
  signed_ms INTEGER NOT NULL,
  PRIMARY KEY (ws_key, tree_size)
) STRICT;

-- Witness cosignature lines held for a checkpoint.
CREATE TABLE ledger_cosignatures (
  ws_key    INTEGER NOT NULL,
  tree_size INTEGER NOT NULL,
  name      TEXT NOT NULL,
  line      TEXT NOT NULL,
  added_ms  INTEGER NOT NULL,
  PRIMARY KEY (ws_key, tree_size, name)
) STRICT;

-- The witnesses registered for a workspace's log (their verifier keys).
CREATE TABLE ledger_witnesses (
  ws_key     INTEGER NOT NULL,
  name       TEXT NOT NULL,
  vkey       TEXT NOT NULL,
  added_ms   INTEGER NOT NULL,
  revoked_ms INTEGER,
  PRIMARY KEY (ws_key, name)
) STRICT;

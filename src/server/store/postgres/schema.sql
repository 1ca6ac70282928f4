-- The PostgreSQL store's schema: the one migration, applied to an empty database by migrate.ts,
-- which records it as version 1 in schema_migrations. A database of any other version is refused.
-- The same tables as the SQLite schema, in PostgreSQL's types: bigint for epoch milliseconds and
-- positions, bytea for hashes and signatures, text for canonical JSON (never jsonb: a record's
-- bytes stay exactly as stored, its signature and its log entry cover them).

-- The version created (migrate.ts).
CREATE TABLE schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_ms bigint NOT NULL
);

CREATE TABLE orgs (
  org_id     text PRIMARY KEY,
  name       text NOT NULL,
  created_ms bigint NOT NULL
);

CREATE TABLE workspaces (
  workspace_id text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs (org_id),
  name         text NOT NULL,
  created_ms   bigint NOT NULL
);

-- A small integer per workspace, keying the evidence indexes and the log's tables.
CREATE TABLE workspace_keys (
  ws_key       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id text NOT NULL UNIQUE
);

CREATE TABLE users (
  user_id    text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES orgs (org_id),
  email      text,
  created_ms bigint NOT NULL
);

-- Only a SHA-256 of each key is kept; prefix is its first characters, for listing.
CREATE TABLE api_keys (
  key_id       text PRIMARY KEY,
  key_hash     bytea NOT NULL UNIQUE,
  prefix       text NOT NULL,
  workspace_id text NOT NULL REFERENCES workspaces (workspace_id),
  user_id      text NOT NULL REFERENCES users (user_id),
  name         text,
  created_ms   bigint NOT NULL,
  expires_ms   bigint,
  revoked_ms   bigint,
  -- reader, writer or admin (docs/security.md, "API key roles"); keys made before roles are writers
  role         text NOT NULL DEFAULT 'writer' CHECK (role IN ('reader', 'writer', 'admin'))
);
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id);

-- Append-only. payload is the canonical JSON text of the payload as sent (wire.md §4).
-- seq is the order stored within a workspace: a write takes its workspace's ledger_heads
-- row lock before it inserts, so a workspace's seqs are handed out in commit order.
-- record_id orders the list's ties (wire.md §5) byte by byte (COLLATE "C"), as SQLite does,
-- whatever the database's locale: with replicas, ids are not handed out in storage order.
CREATE TABLE evidence (
  seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  record_id       text COLLATE "C" NOT NULL UNIQUE,
  workspace_id    text NOT NULL,
  ws_key          integer NOT NULL,
  record_type     text NOT NULL,
  system_name     text NOT NULL,
  identity        text,
  resource        text,
  environment     text,
  occurred_at     text NOT NULL,
  occurred_ms     bigint NOT NULL,
  payload         text NOT NULL,
  client_sig      text,
  client_sig_algo text,
  source          text NOT NULL,
  mapped_controls text NOT NULL,
  received_at     text NOT NULL,
  received_ms     bigint NOT NULL
);
-- The list (newest first: read backwards), its filters, and the export (order stored).
CREATE INDEX evidence_by_time ON evidence (ws_key, occurred_ms, record_id);
CREATE INDEX evidence_by_system ON evidence (ws_key, system_name, occurred_ms, record_id);
CREATE INDEX evidence_by_type ON evidence (ws_key, record_type, occurred_ms, record_id);
CREATE INDEX evidence_by_seq ON evidence (ws_key, seq);

-- Append-only. record is the canonical JSON text of the attestation as sent, signature included.
-- witness_sig: the 64 bytes of a verified signature, accepted once in the whole service.
CREATE TABLE attestations (
  seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  attestation_id  text NOT NULL UNIQUE,
  workspace_id    text NOT NULL,
  system_name     text NOT NULL,
  agent_name      text NOT NULL,
  tool_name       text NOT NULL,
  input_hash      text NOT NULL,
  output_hash     text NOT NULL,
  executed_at     text NOT NULL,
  executed_ms     bigint NOT NULL,
  record          text NOT NULL,
  witness_form    text CHECK (witness_form IN ('canonical', 'legacy')),
  witness_sig     bytea,
  signed_ms       bigint,
  key_fingerprint text,
  trust_tier      text NOT NULL,
  tier_reason     text,
  source          text NOT NULL,
  received_at     text NOT NULL,
  received_ms     bigint NOT NULL
);
CREATE UNIQUE INDEX attestations_by_signature ON attestations (signed_ms, witness_sig) WHERE witness_sig IS NOT NULL;
CREATE INDEX attestations_by_time ON attestations (workspace_id, executed_ms, seq);

-- Kept current as records arrive, so that posture and gates never scan evidence.
CREATE TABLE control_coverage (
  workspace_id   text NOT NULL,
  control_id     text NOT NULL,
  last_earned_ms bigint NOT NULL,
  PRIMARY KEY (workspace_id, control_id)
);

-- record_types and controls: JSON array text, sorted by code point.
CREATE TABLE systems (
  workspace_id     text NOT NULL,
  name             text NOT NULL,
  system_id        text NOT NULL UNIQUE,
  registered       integer NOT NULL DEFAULT 0,
  risk_tier        text,
  risk_at_ms       bigint,
  last_evidence_ms bigint NOT NULL,
  last_attested_ms bigint,
  record_count     bigint NOT NULL DEFAULT 0,
  record_types     text NOT NULL DEFAULT '[]',
  controls         text NOT NULL DEFAULT '[]',
  PRIMARY KEY (workspace_id, name)
);

-- Before migration 4, a workspace's own gate rules. No longer written: read once, for the first
-- change logged for such a workspace (its defaults), which holds the rules it had.
CREATE TABLE gate_policy (
  workspace_id text NOT NULL REFERENCES workspaces (workspace_id),
  framework    text NOT NULL,
  mode         text NOT NULL CHECK (mode IN ('required', 'advisory')),
  threshold    double precision NOT NULL CHECK (threshold BETWEEN 0 AND 100),
  updated_ms   bigint NOT NULL,
  PRIMARY KEY (workspace_id, framework)
);

-- Every change of a workspace's gate policy, in order, each a gate_policy leaf of its log
-- (docs/ledger.md). record is the change record's canonical JSON exactly as logged; the policy in
-- force is the latest change's. A change is written under its workspace's ledger_heads row lock,
-- so a workspace's seqs follow commit order.
CREATE TABLE gate_policy_changes (
  seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  change_id    text NOT NULL UNIQUE,
  workspace_id text NOT NULL REFERENCES workspaces (workspace_id),
  record       text NOT NULL
);
CREATE INDEX gate_policy_changes_by_workspace ON gate_policy_changes (workspace_id, seq);

-- Each workspace's verifying keys (public keys only), by fingerprint. Revoked keys stay listed.
CREATE TABLE signing_keys (
  workspace_id text NOT NULL REFERENCES workspaces (workspace_id),
  fingerprint  text NOT NULL,
  public_key   text NOT NULL,
  name         text,
  created_ms   bigint NOT NULL,
  revoked_ms   bigint,
  PRIMARY KEY (workspace_id, fingerprint)
);

-- A workspace without a row has the default policy, 'open'.
CREATE TABLE witness_policy (
  workspace_id text PRIMARY KEY REFERENCES workspaces (workspace_id),
  policy       text NOT NULL CHECK (policy IN ('open', 'registered')),
  updated_ms   bigint NOT NULL
);

-- A key is taken by the first write that commits it: the primary key decides across replicas.
CREATE TABLE idempotency_keys (
  workspace_id text NOT NULL,
  idem_key     text NOT NULL,
  content_hash text NOT NULL,
  result       text NOT NULL,
  created_ms   bigint NOT NULL,
  PRIMARY KEY (workspace_id, idem_key)
);
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_ms);

-- Each workspace's request and record budget in its current fixed window, shared by replicas.
-- last_ok: whether the last record charge was taken (a refused charge changes nothing else).
CREATE TABLE budget_windows (
  workspace_id text PRIMARY KEY,
  start_ms     bigint NOT NULL,
  requests     bigint NOT NULL,
  records      bigint NOT NULL,
  last_ok      boolean NOT NULL DEFAULT true
);

-- The transparency log (docs/ledger.md). ledger_heads: the next leaf index of each
-- workspace, updated by the write that stores the leaves (its row lock orders a workspace's
-- writes across replicas); ledger_state: how far the integrator has come.
CREATE TABLE ledger_heads (
  ws_key     integer PRIMARY KEY,
  next_index bigint NOT NULL
);
CREATE TABLE ledger_state (
  ws_key          integer PRIMARY KEY,
  integrated_size bigint NOT NULL
);
CREATE TABLE ledger_leaves (
  ws_key     integer NOT NULL,
  leaf_index bigint NOT NULL,
  kind       text NOT NULL,
  record_id  text NOT NULL,
  entry      bytea NOT NULL,
  PRIMARY KEY (ws_key, leaf_index)
);
CREATE UNIQUE INDEX ledger_leaves_by_record ON ledger_leaves (ws_key, record_id);
CREATE TABLE ledger_nodes (
  ws_key integer NOT NULL,
  level  integer NOT NULL,
  idx    bigint NOT NULL,
  hash   bytea NOT NULL,
  PRIMARY KEY (ws_key, level, idx)
);
CREATE TABLE ledger_checkpoints (
  ws_key    integer NOT NULL,
  tree_size bigint NOT NULL,
  root      bytea NOT NULL,
  note      text NOT NULL,
  signed_ms bigint NOT NULL,
  PRIMARY KEY (ws_key, tree_size)
);
CREATE TABLE ledger_cosignatures (
  ws_key    integer NOT NULL,
  tree_size bigint NOT NULL,
  name      text NOT NULL,
  line      text NOT NULL,
  added_ms  bigint NOT NULL,
  PRIMARY KEY (ws_key, tree_size, name)
);
CREATE TABLE ledger_witnesses (
  ws_key     integer NOT NULL,
  name       text NOT NULL,
  vkey       text NOT NULL,
  added_ms   bigint NOT NULL,
  revoked_ms bigint,
  PRIMARY KEY (ws_key, name)
);

-- Work one replica at a time does (the log's integration and signing): held by holder
-- until expires_ms, renewed by it, taken over by another once expired.
CREATE TABLE leases (
  name       text PRIMARY KEY,
  holder     text NOT NULL,
  expires_ms bigint NOT NULL
);

-- Admission (budget.ts): a batch of requests in one statement. Each request's key is read by
-- its hash; a valid key (not revoked, not expired at its now_ms, of the path's workspace when
-- the path names one) counts one request in its workspace's window and charges its records
-- when it is within its budget and they all fit (else none). Requests are taken in workspace
-- order, then in the batch's order: a workspace's budget row is locked (FOR UPDATE; a missing
-- one is created first, as a window already ended) at its first counted request, counted in
-- variables, and written once after its last, so batches lock rows in one order and never
-- deadlock. The counts need no WAL flush: synchronous_commit is off for this transaction alone.
CREATE FUNCTION govctl_admit(
  p_hash bytea[], p_now_ms bigint[], p_path_ws text[], p_budget_now_ms bigint[],
  p_window_ms bigint, p_max_requests bigint[], p_records bigint[], p_max_records bigint[]
) RETURNS TABLE (
  ord integer, key_id text, key_hash bytea, workspace_id text, user_id text, org_id text, role text,
  revoked_ms bigint, expires_ms bigint, start_ms bigint, requests bigint, records bigint, last_ok boolean
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  k record;
  b_now bigint;
  -- the workspace being counted, and its window as counted so far in this batch
  b_ws text := NULL;
  b_start bigint;
  b_requests bigint;
  b_records bigint;
  b_ok boolean;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR k IN
    SELECT a.i, ak.key_id, ak.key_hash, ak.workspace_id, ak.user_id, ws.org_id, ak.role, ak.revoked_ms, ak.expires_ms
      FROM unnest(p_hash) WITH ORDINALITY AS a (hash, i)
      JOIN api_keys ak ON ak.key_hash = a.hash
      JOIN workspaces ws ON ws.workspace_id = ak.workspace_id
     ORDER BY ak.workspace_id COLLATE "C", a.i
  LOOP
    ord := k.i; key_id := k.key_id; key_hash := k.key_hash; workspace_id := k.workspace_id;
    user_id := k.user_id; org_id := k.org_id; role := k.role; revoked_ms := k.revoked_ms; expires_ms := k.expires_ms;
    start_ms := NULL; requests := NULL; records := NULL; last_ok := NULL;
    IF k.revoked_ms IS NULL AND (k.expires_ms IS NULL OR k.expires_ms > p_now_ms[k.i])
       AND (p_path_ws[k.i] IS NULL OR k.workspace_id = p_path_ws[k.i]) THEN
      IF b_ws IS DISTINCT FROM k.workspace_id THEN
        IF b_ws IS NOT NULL THEN
          UPDATE budget_windows AS w SET start_ms = b_start, requests = b_requests, records = b_records, last_ok = b_ok
           WHERE w.workspace_id = b_ws;
        END IF;
        b_ws := k.workspace_id;
        SELECT w.start_ms, w.requests, w.records, w.last_ok INTO b_start, b_requests, b_records, b_ok
          FROM budget_windows AS w WHERE w.workspace_id = b_ws FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO budget_windows AS w (workspace_id, start_ms, requests, records, last_ok)
            VALUES (b_ws, -9223372036854775807, 0, 0, true) ON CONFLICT DO NOTHING;
          SELECT w.start_ms, w.requests, w.records, w.last_ok INTO b_start, b_requests, b_records, b_ok
            FROM budget_windows AS w WHERE w.workspace_id = b_ws FOR UPDATE;
        END IF;
      END IF;
      b_now := p_budget_now_ms[k.i];
      IF b_start + p_window_ms <= b_now THEN
        b_start := b_now; b_requests := 0; b_records := 0;
      END IF;
      b_requests := b_requests + 1;
      b_ok := b_requests <= p_max_requests[k.i] AND b_records + p_records[k.i] <= p_max_records[k.i];
      IF b_ok THEN
        b_records := b_records + p_records[k.i];
      END IF;
      start_ms := b_start; requests := b_requests; records := b_records; last_ok := b_ok;
    END IF;
    RETURN NEXT;
  END LOOP;
  IF b_ws IS NOT NULL THEN
    UPDATE budget_windows AS w SET start_ms = b_start, requests = b_requests, records = b_records, last_ok = b_ok
     WHERE w.workspace_id = b_ws;
  END IF;
END
$$;

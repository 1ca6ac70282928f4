/**
 * The service's schema, as versioned migrations applied in order when a database is opened
 * (database.ts). The applied version is SQLite's `user_version`. Append a migration to change the
 * schema; never edit one that has shipped.
 *
 * Times are kept twice where they are sorted or compared: the string as the client sent it
 * (returned unchanged, signatures cover it) and epoch milliseconds (`*_ms`) for ordering.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
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
        revoked_ms   INTEGER
      ) STRICT;
      CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id);

      -- Append-only: no statement in the service updates or deletes a row.
      -- payload is the canonical JSON text of the payload as sent (docs/wire-format.md).
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
        received_ms     INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX evidence_by_time ON evidence (workspace_id, occurred_ms DESC, record_id DESC);
      CREATE INDEX evidence_by_system ON evidence (workspace_id, system_name, occurred_ms DESC, record_id DESC);
      CREATE INDEX evidence_by_type ON evidence (workspace_id, record_type, occurred_ms DESC, record_id DESC);

      -- Append-only. record is the canonical JSON text of the attestation as sent, signature included.
      CREATE TABLE attestations (
        seq            INTEGER PRIMARY KEY,
        attestation_id TEXT NOT NULL UNIQUE,
        workspace_id   TEXT NOT NULL,
        system_name    TEXT NOT NULL,
        agent_name     TEXT NOT NULL,
        tool_name      TEXT NOT NULL,
        input_hash     TEXT NOT NULL,
        output_hash    TEXT NOT NULL,
        executed_at    TEXT NOT NULL,
        executed_ms    INTEGER NOT NULL,
        record         TEXT NOT NULL,
        witness_form   TEXT CHECK (witness_form IN ('canonical', 'legacy')),
        trust_tier     TEXT NOT NULL,
        source         TEXT NOT NULL,
        received_at    TEXT NOT NULL,
        received_ms    INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX attestations_by_system ON attestations (workspace_id, system_name, executed_ms);

      -- Kept current as records arrive, so that posture and gates never scan evidence.
      CREATE TABLE control_coverage (
        workspace_id   TEXT NOT NULL,
        control_id     TEXT NOT NULL,
        last_earned_ms INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, control_id)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE systems (
        workspace_id     TEXT NOT NULL,
        name             TEXT NOT NULL,
        system_id        TEXT NOT NULL UNIQUE,
        registered       INTEGER NOT NULL DEFAULT 0,
        risk_tier        TEXT,
        risk_at_ms       INTEGER,
        last_evidence_ms INTEGER NOT NULL,
        last_attested_ms INTEGER,
        PRIMARY KEY (workspace_id, name)
      ) STRICT;

      CREATE TABLE gate_policy (
        workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
        framework    TEXT NOT NULL,
        mode         TEXT NOT NULL CHECK (mode IN ('required', 'advisory')),
        threshold    REAL NOT NULL CHECK (threshold BETWEEN 0 AND 100),
        updated_ms   INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, framework)
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: 'ascending evidence indexes; no attestations index',
    // The list reads these indexes newest first, which SQLite does by walking them backwards just
    // as fast. Stored descending, every new record (a later occurred_at, a larger record_id) went
    // to the left edge of its range, where a page split leaves two half-full pages; ascending, it
    // goes to the right edge, where SQLite appends. About 15 % fewer pages per group commit.
    sql: `
      DROP INDEX evidence_by_time;
      DROP INDEX evidence_by_system;
      DROP INDEX evidence_by_type;
      CREATE INDEX evidence_by_time ON evidence (workspace_id, occurred_ms, record_id);
      CREATE INDEX evidence_by_system ON evidence (workspace_id, system_name, occurred_ms, record_id);
      CREATE INDEX evidence_by_type ON evidence (workspace_id, record_type, occurred_ms, record_id);
      -- No request reads attestations by system (posture and systems read the systems table), and
      -- this index cost a page per system in every commit: half the pages of a batch of 100.
      -- An endpoint that lists attestations adds the index it needs in its own migration.
      DROP INDEX attestations_by_system;
    `,
  },
  {
    version: 3,
    name: 'narrow evidence indexes keyed by an integer workspace key',
    // Each evidence index entry held the workspace id and the record id as text (about 80 bytes
    // of a ~100-byte entry), so a page held few entries, split often, and a group commit wrote
    // about 40 pages for 10 records. Keyed by a small integer per workspace, and with ties left to
    // the row's seq (which every index entry carries anyway), a group commit writes about 30 and a
    // stored record costs ~15 % less. The list orders ties by seq: the order records were stored,
    // which is the order of their record_ids (UUIDv7, handed out in increasing order; see ids.ts).
    // Rows are back-filled once, here: the only statement that changes existing evidence rows, and
    // it adds a key, nothing a record holds.
    sql: `
      CREATE TABLE workspace_keys (
        ws_key       INTEGER PRIMARY KEY,
        workspace_id TEXT NOT NULL UNIQUE
      ) STRICT;
      INSERT INTO workspace_keys (workspace_id)
        SELECT workspace_id FROM (SELECT workspace_id, created_ms FROM workspaces
                                  UNION ALL SELECT DISTINCT workspace_id, NULL FROM evidence)
        GROUP BY workspace_id ORDER BY min(coalesce(created_ms, 0)), workspace_id;
      ALTER TABLE evidence ADD COLUMN ws_key INTEGER;
      UPDATE evidence SET ws_key = (SELECT k.ws_key FROM workspace_keys k WHERE k.workspace_id = evidence.workspace_id);
      DROP INDEX evidence_by_time;
      DROP INDEX evidence_by_system;
      DROP INDEX evidence_by_type;
      CREATE INDEX evidence_by_time ON evidence (ws_key, occurred_ms);
      CREATE INDEX evidence_by_system ON evidence (ws_key, system_name, occurred_ms);
      CREATE INDEX evidence_by_type ON evidence (ws_key, record_type, occurred_ms);
    `,
  },
  {
    version: 4,
    name: 'evidence list indexes written in batches',
    // Each record of a group commit went to its own leaf of evidence_by_system when records are
    // spread over many systems (about 11 of the ~26 pages a group of 10 wrote), and to one of a
    // few leaves of the type and time indexes. The same entries now live in tables that are filled
    // a batch at a time (evidence.ts: every record up to through_seq has its entries, written
    // sorted, so a batch of a thousand touches each leaf once); lists read the few records after
    // through_seq from the end of the evidence table. Entries are derived data, written in the
    // same transaction as the records they follow.
    sql: `
      DROP INDEX evidence_by_time;
      DROP INDEX evidence_by_system;
      DROP INDEX evidence_by_type;
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
      INSERT INTO evidence_by_time (ws_key, occurred_ms, seq)
        SELECT ws_key, occurred_ms, seq FROM evidence ORDER BY ws_key, occurred_ms, seq;
      INSERT INTO evidence_by_system (ws_key, system_name, occurred_ms, seq)
        SELECT ws_key, system_name, occurred_ms, seq FROM evidence ORDER BY ws_key, system_name, occurred_ms, seq;
      INSERT INTO evidence_by_type (ws_key, record_type, occurred_ms, seq)
        SELECT ws_key, record_type, occurred_ms, seq FROM evidence ORDER BY ws_key, record_type, occurred_ms, seq;
      -- How far derived tables have been brought: every record with seq <= through_seq is in them.
      CREATE TABLE index_progress (
        name        TEXT PRIMARY KEY,
        through_seq INTEGER NOT NULL
      ) STRICT;
      INSERT INTO index_progress (name, through_seq)
        VALUES ('evidence_lists', coalesce((SELECT max(seq) FROM evidence), 0));
    `,
  },
  {
    version: 5,
    name: 'systems count their records, record types and controls',
    // What existing clients of this kind of service show per system (docs/service.md,
    // "Extensions"): kept in the systems row, merged at each group commit like the rest of it, so
    // listing systems never scans evidence. Existing rows are filled from the stored records.
    sql: `
      ALTER TABLE systems ADD COLUMN record_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE systems ADD COLUMN record_types TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE systems ADD COLUMN controls TEXT NOT NULL DEFAULT '[]';
      UPDATE systems SET record_count = t.n
        FROM (SELECT workspace_id, system_name, count(*) AS n FROM evidence GROUP BY workspace_id, system_name) AS t
        WHERE t.workspace_id = systems.workspace_id AND t.system_name = systems.name;
      UPDATE systems SET record_types = t.types
        FROM (SELECT workspace_id, system_name, json_group_array(record_type) AS types
              FROM (SELECT DISTINCT workspace_id, system_name, record_type FROM evidence ORDER BY 1, 2, 3)
              GROUP BY workspace_id, system_name) AS t
        WHERE t.workspace_id = systems.workspace_id AND t.system_name = systems.name;
      UPDATE systems SET controls = t.controls
        FROM (SELECT workspace_id, system_name, json_group_array(control) AS controls
              FROM (SELECT DISTINCT e.workspace_id, e.system_name, c.value AS control FROM evidence e, json_each(e.mapped_controls) c ORDER BY 1, 2, 3)
              GROUP BY workspace_id, system_name) AS t
        WHERE t.workspace_id = systems.workspace_id AND t.system_name = systems.name;
    `,
  },
  {
    version: 6,
    name: 'the transparency log: leaves, complete subtrees, checkpoints, witnesses (issue 12)',
    // One append-only Merkle tree per workspace (docs/ledger.md). A leaf's index is assigned in
    // the transaction that stores its record; integration (store/ledger.ts) adds the complete
    // subtrees and signs a checkpoint. The records already stored are appended, in storage order,
    // by the first Store that opens the database (their entries need the record views, which SQL
    // cannot compute): ledger_backfill marks that they are still to be appended.
    sql: `
      CREATE TABLE ledger_state (
        ws_key          INTEGER PRIMARY KEY,
        integrated_size INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE ledger_leaves (
        ws_key     INTEGER NOT NULL,
        leaf_index INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        record_id  TEXT NOT NULL,
        entry      BLOB NOT NULL,
        PRIMARY KEY (ws_key, leaf_index)
      ) STRICT, WITHOUT ROWID;
      CREATE UNIQUE INDEX ledger_leaves_by_record ON ledger_leaves (ws_key, record_id);
      CREATE TABLE ledger_nodes (
        ws_key INTEGER NOT NULL,
        level  INTEGER NOT NULL,
        idx    INTEGER NOT NULL,
        hash   BLOB NOT NULL,
        PRIMARY KEY (ws_key, level, idx)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE ledger_checkpoints (
        ws_key    INTEGER NOT NULL,
        tree_size INTEGER NOT NULL,
        root      BLOB NOT NULL,
        note      TEXT NOT NULL,
        signed_ms INTEGER NOT NULL,
        PRIMARY KEY (ws_key, tree_size)
      ) STRICT;
      CREATE TABLE ledger_cosignatures (
        ws_key    INTEGER NOT NULL,
        tree_size INTEGER NOT NULL,
        name      TEXT NOT NULL,
        line      TEXT NOT NULL,
        added_ms  INTEGER NOT NULL,
        PRIMARY KEY (ws_key, tree_size, name)
      ) STRICT;
      CREATE TABLE ledger_witnesses (
        ws_key     INTEGER NOT NULL,
        name       TEXT NOT NULL,
        vkey       TEXT NOT NULL,
        added_ms   INTEGER NOT NULL,
        revoked_ms INTEGER,
        PRIMARY KEY (ws_key, name)
      ) STRICT;
      CREATE TABLE ledger_backfill (pending INTEGER NOT NULL) STRICT;
      INSERT INTO ledger_backfill (pending) VALUES (1);
    `,
  },
  {
    version: 7,
    name: 'idempotency keys',
    // A write that carries an idempotency key (docs/service.md "Idempotency") leaves its key here,
    // in the same transaction as the record, with a hash of what was sent and the result it got:
    // a repeat finds it (also after a restart) and is answered with that result, storing nothing.
    // Keys are scoped per workspace and pruned after a retention time (store/idempotency.ts);
    // by_time serves the prune.
    sql: `
      CREATE TABLE idempotency_keys (
        workspace_id TEXT NOT NULL,
        idem_key     TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        result       TEXT NOT NULL,
        created_ms   INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, idem_key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_ms);
    `,
  },
  {
    version: 8,
    name: 'witness signatures once each, verifying-key registry, attestation reads',
    // witness_sig holds the signature's 64 bytes (decoded, so that upper- and lower-case hex of one
    // signature are one value) under a unique index: a signature is accepted once in the whole
    // service, enforced by the database across restarts and concurrent group commits (the insert
    // is `ON CONFLICT DO NOTHING`, so a replay in a batch is that item's rejection, not the
    // batch's). Unsigned attestations keep NULL and stay out of the (partial) index.
    // The index leads with signed_ms, the executed_at the signed message covers (epoch ms; 0 when
    // the attestation has none): signatures are random, so an index on them alone put every new
    // entry on a random leaf (a page per signed attestation in each group commit), while new
    // attestations' times are about now, so entries go to the right edge. It is as unique: a
    // verified signature covers exactly one message, and that message fixes executed_at (its text
    // is in both message forms, or absent: 0), so one signature can only ever have one signed_ms.
    // Rows stored before this version: the first stored copy of each verified signature gets its
    // bytes; any later copy (a replay the service used to accept) keeps NULL, so the index can be
    // built; nothing else about those rows changes (append-only). key_fingerprint is hex SHA-256 of
    // the public key bytes, which SQL cannot compute: NULL for those rows, and the read endpoints
    // compute it from the stored key. witness_form was stored from the start.
    // attestations_by_time serves the list (newest first, per workspace); its entries for a
    // workspace go to the right edge of that workspace's range, about one leaf per commit.
    sql: `
      ALTER TABLE attestations ADD COLUMN witness_sig BLOB;
      ALTER TABLE attestations ADD COLUMN signed_ms INTEGER;
      ALTER TABLE attestations ADD COLUMN key_fingerprint TEXT;
      ALTER TABLE attestations ADD COLUMN tier_reason TEXT;
      UPDATE attestations SET witness_sig = unhex(json_extract(record, '$.witness_sig')),
                              signed_ms = CASE WHEN json_type(record, '$.executed_at') = 'text' THEN executed_ms ELSE 0 END
        WHERE seq IN (SELECT min(seq) FROM attestations
                      WHERE witness_form IS NOT NULL AND json_type(record, '$.witness_sig') = 'text'
                      GROUP BY lower(json_extract(record, '$.witness_sig')));
      CREATE UNIQUE INDEX attestations_by_signature ON attestations (signed_ms, witness_sig) WHERE witness_sig IS NOT NULL;
      CREATE INDEX attestations_by_time ON attestations (workspace_id, executed_ms);

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
    `,
  },
  {
    version: 9,
    name: 'log leaves in a rowid table keyed by workspace and index',
    // A leaf's row is ~250 bytes. Kept WITHOUT ROWID under its (ws_key, leaf_index) key, the whole
    // row was the key of an index B-tree: copies of rows in its interior pages, and every append
    // that filled a page rebalanced its neighbours, about 8.5 WAL pages per group commit of ten
    // writes for the leaves alone, against 5.5 in a rowid table, where an append at the end of the
    // tree is SQLite's quick balance. The rowid is the key itself, (ws_key << 40) + leaf_index
    // (2^40 leaves a workspace, 2^23 workspaces), so reads by workspace and index are rowid reads and
    // ranges, with no second index; the CHECK keeps every writer to that rule. The by-record index
    // is unchanged.
    sql: `
      CREATE TABLE ledger_leaves_keyed (
        leaf_key   INTEGER PRIMARY KEY,
        ws_key     INTEGER NOT NULL,
        leaf_index INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        record_id  TEXT NOT NULL,
        entry      BLOB NOT NULL,
        CHECK (leaf_index >= 0 AND leaf_index < 1099511627776 AND leaf_key = (ws_key << 40) + leaf_index)
      ) STRICT;
      INSERT INTO ledger_leaves_keyed (leaf_key, ws_key, leaf_index, kind, record_id, entry)
        SELECT (ws_key << 40) + leaf_index, ws_key, leaf_index, kind, record_id, entry FROM ledger_leaves ORDER BY ws_key, leaf_index;
      DROP TABLE ledger_leaves;
      ALTER TABLE ledger_leaves_keyed RENAME TO ledger_leaves;
      CREATE UNIQUE INDEX ledger_leaves_by_record ON ledger_leaves (ws_key, record_id);
    `,
  },
  {
    version: 10,
    name: 'gate policy changes, each a leaf of the transparency log (issue 29)',
    // Every change of a workspace's gate policy, in order (gate-policy.ts, docs/ledger.md): record
    // is the change record's canonical JSON exactly as logged, and the policy in force is the
    // latest change's. The rows of gate_policy, written before this version, are read once: the
    // first change logged for such a workspace (its defaults) holds the rules it had.
    sql: `
      CREATE TABLE gate_policy_changes (
        seq          INTEGER PRIMARY KEY,
        change_id    TEXT NOT NULL UNIQUE,
        workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
        record       TEXT NOT NULL
      ) STRICT;
      CREATE INDEX gate_policy_changes_by_workspace ON gate_policy_changes (workspace_id, seq);
    `,
  },
  {
    version: 11,
    name: 'API key roles: reader, writer, admin (issue 32)',
    // A key's role (docs/security.md, "API key roles"); keys made before are writers.
    sql: `
      ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'writer' CHECK (role IN ('reader', 'writer', 'admin'));
    `,
  },
  {
    version: 12,
    name: 'signed gate verdicts (issue 33)',
    // record is the canonical JSON the verdict's log leaf commits to, returned as stored.
    sql: `
      CREATE TABLE gate_verdicts (
        workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
        verdict_id   TEXT NOT NULL,
        issued_ms    INTEGER NOT NULL,
        exit_code    INTEGER NOT NULL,
        record       TEXT NOT NULL,
        PRIMARY KEY (workspace_id, verdict_id)
      ) STRICT, WITHOUT ROWID;
    `,
  },
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

// @ts-check
/**
 * Loads N evidence records straight into a service database, as a child process (runChild), through
 * the service's own write path minus HTTP: `createApp({ db }).store.recordEvidence(...)`, the
 * function the POST grc/evidence handler awaits (group commit, one transaction per group of up to
 * 2000 writes, evidence + control coverage + systems updated together). Each record is first
 * checked with core's validateRecord, its payload canonicalised and its controls computed with
 * core's controlsEarned, exactly as the handler does; the row is built as the handler builds it.
 *
 * Records: ai_risk_assessment and model_evaluation alternately, 50 systems, occurred_at spread
 * over the last 89 days (all inside the default 90-day window).
 *
 * IPC: `{ type: 'ready', count, seconds, perSecond }` when done.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DIST } from './harness.mjs';
import { modelEvaluation, riskAssessment } from './records.mjs';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    workspace: { type: 'string' },
    count: { type: 'string' },
  },
});

/** `rec_` + a UUIDv7 (time-ordered), the shape the service's ids have. */
let lastMs = 0;
let seq = 0;
/** @param {number} nowMs */
function recordId(nowMs) {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    seq = 0;
  } else if (++seq > 0xfff) {
    lastMs += 1;
    seq = 0;
  }
  const b = randomBytes(16);
  b.writeUIntBE(lastMs, 0, 6);
  b[6] = 0x70 | (seq >>> 8);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (b[8] & 0x3f);
  const h = b.toString('hex');
  return `rec_${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

try {
  const [{ createApp }, core] = await Promise.all([import(DIST.server), import(DIST.core)]);
  const count = Number(values.count);
  const workspaceId = values.workspace;
  const service = await createApp({ db: values.db });
  const { store } = service;

  const DAY = 86_400_000;
  const start = Date.now();
  const CHUNK = 10_000;
  for (let done = 0; done < count;) {
    const n = Math.min(CHUNK, count - done);
    const writes = new Array(n);
    for (let j = 0; j < n; j += 1) {
      const i = done + j;
      const receivedMs = Date.now();
      const occurredMs = receivedMs - Math.floor((((i * 7919) % count) / count) * 89 * DAY);
      const occurredAt = new Date(occurredMs).toISOString();
      const record = i % 2 === 0 ? riskAssessment(i, { occurredAt }) : modelEvaluation(i, { occurredAt });
      const issues = core.validateRecord(record);
      if (issues.length > 0) throw new Error(`seed record ${i} is not valid: ${JSON.stringify(issues)}`);
      const controls = core.controlsEarned(record.record_type, record.payload);
      const receivedAt = new Date(receivedMs).toISOString();
      writes[j] = store.recordEvidence({
        row: {
          record_id: recordId(receivedMs),
          workspace_id: workspaceId,
          record_type: record.record_type,
          system_name: record.system_name,
          identity: record.identity ?? null,
          resource: record.resource ?? null,
          environment: record.environment ?? null,
          occurred_at: occurredAt,
          occurred_ms: occurredMs,
          payload: core.canonicalize(record.payload),
          client_sig: null,
          client_sig_algo: null,
          source: 'import',
          mapped_controls: JSON.stringify(controls),
          received_at: receivedAt,
          received_ms: receivedMs,
        },
        controls,
        ...(record.record_type === 'ai_risk_assessment' ? { riskTier: record.payload.risk_level } : {}),
      });
    }
    await Promise.all(writes);
    done += n;
    if (done % 100_000 === 0 || done === count) process.stderr.write(`seeded ${done}/${count}\n`);
  }
  const seconds = (Date.now() - start) / 1000;
  const rows = store.db.prepare('SELECT count(*) AS n FROM evidence WHERE workspace_id = ?').get(workspaceId).n;
  await service.close();
  process.send?.({ type: 'ready', count, rows, seconds, perSecond: count / seconds }, () => process.disconnect());
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
  process.send?.({ type: 'error', message: error instanceof Error ? error.message : String(error) }, () => process.disconnect());
}

/**
 * The transparency log's endpoints (issue 12; docs/ledger.md, docs/service.md "The transparency
 * log"), under the workspace prefix, with the same authentication as every other endpoint:
 * - GET ledger/checkpoint: the latest signed checkpoint (text/plain) with every cosignature held;
 * - GET ledger/key: the log's verifier key (text/plain);
 * - GET ledger/tile/<L>/<N>[.p/<W>] and ledger/tile/entries/<N>[.p/<W>]: tiles (immutable), 404 past the tree;
 * - GET ledger/proof/inclusion?id=…[&tree_size=N] and ledger/proof/consistency?from=M&to=N;
 * - POST ledger/cosignatures: a registered witness's cosignature on one of the log's checkpoints.
 *
 * A record whose leaf is not integrated yet answers 202 with `Retry-After: 1` (the maximum merge
 * delay is 1 s): the write was acknowledged, its proof is on its way.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseTilePath } from '../../core/index.js';
import { authOf } from '../auth.js';
import { HttpError, invalidField, notFound } from '../errors.js';
import { bodyObject } from '../json-body.js';
import { integerParam, textParam, type Query } from '../query.js';
import { LedgerQueryError } from '../ledger/notes.js';
import type { LedgerStore } from '../store/store.js';
import { WORKSPACE_PREFIX, type RouteDeps } from './deps.js';

const LEDGER_PREFIX = `${WORKSPACE_PREFIX}/ledger`;
const TEXT = 'text/plain; charset=utf-8';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const MAX_SIZE = Number.MAX_SAFE_INTEGER;

/** Ledger failures in the service's error shape. */
function httpError(error: unknown): unknown {
  if (!(error instanceof LedgerQueryError)) return error;
  if (error.code === 'not_found') return notFound(error.message);
  if (error.code === 'no_key') return new HttpError(503, 'service_unavailable', error.message, undefined, { 'retry-after': '3600' });
  // The store's messages are whole sentences that name their field already (invalidField would
  // prefix it a second time: "from from must not be larger than to").
  return new HttpError(422, 'validation_error', error.message, error.field ?? 'id');
}

async function answer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw httpError(error);
  }
}

export interface LedgerRouteOptions {
  /** integrate pending leaves before every read (the embedded store, which runs no timer) */
  integrateOnRead: boolean;
}

export function registerLedgerRoutes(app: FastifyInstance, { store }: RouteDeps, options: LedgerRouteOptions = { integrateOnRead: false }): void {
  const ledger: LedgerStore = store.ledger;
  const before = async (): Promise<void> => {
    if (options.integrateOnRead) await ledger.integrate();
  };

  app.get(`${LEDGER_PREFIX}/checkpoint`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    await before();
    const note = await answer(() => ledger.checkpoint(workspaceId));
    void reply.type(TEXT).header('cache-control', 'no-cache');
    return note;
  });

  app.get(`${LEDGER_PREFIX}/key`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const key = await answer(() => ledger.verifierKey(workspaceId));
    void reply.type(TEXT);
    return `${key}\n`;
  });

  app.get(`${LEDGER_PREFIX}/tile/*`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const rest = (request.params as { '*': string })['*'];
    let tile;
    try {
      tile = parseTilePath(`tile/${rest}`);
    } catch {
      throw notFound('no such tile (tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], tlog-tiles)');
    }
    await before();
    const bytes = await answer(() => ledger.tile(workspaceId, tile));
    if (bytes === null) throw notFound('the log has no such tile (yet)');
    // A tile's bytes never change: a full tile is final, and a partial one of width W is the same
    // W hashes for ever (the next width is another path).
    void reply.type('application/octet-stream').header('cache-control', IMMUTABLE);
    return bytes;
  });

  app.get(`${LEDGER_PREFIX}/proof/inclusion`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    const id = textParam(query, 'id', 128);
    if (id === undefined || id === '') throw invalidField('id', 'is required: a record id or attestation id');
    const treeSize = query.tree_size === undefined ? undefined : integerParam(query, 'tree_size', 0, 1, MAX_SIZE);
    await before();
    const proof = await answer(() => ledger.inclusion(workspaceId, id, treeSize));
    if ('pending' in proof) {
      void reply.code(202).header('retry-after', '1');
      return { ...proof.pending, detail: 'not_integrated' };
    }
    return proof;
  });

  app.get(`${LEDGER_PREFIX}/proof/consistency`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    if (query.from === undefined) throw invalidField('from', 'is required: the older tree size');
    if (query.to === undefined) throw invalidField('to', 'is required: the newer tree size');
    const from = integerParam(query, 'from', 0, 0, MAX_SIZE);
    const to = integerParam(query, 'to', 0, 0, MAX_SIZE);
    await before();
    return await answer(() => ledger.consistency(workspaceId, from, to));
  });

  app.post(`${LEDGER_PREFIX}/cosignatures`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const note = bodyObject(request).checkpoint;
    if (typeof note !== 'string') throw invalidField('checkpoint', 'is required: the checkpoint note with the witness cosignature line(s)');
    const witnesses = await answer(() => ledger.addCosignatures(workspaceId, note));
    void reply.code(201);
    return { accepted: witnesses };
  });
}

// @ts-check
/**
 * HTTP load with autocannon, bounded in time AND request count, against 127.0.0.1 only.
 *
 * Every run cycles through a list of pre-built bodies with `setupRequest` (one shared counter
 * across connections, so each request in a run carries the next body), so that the baseline and
 * the service are loaded through the very same client code path and cost. Latencies are kept raw
 * (float ms, from autocannon's per-response event) for exact percentiles: autocannon's own
 * histogram rounds to whole milliseconds.
 */
import autocannon from 'autocannon';
import { HOST, cpuSecondsOf, machineBusySeconds, percentile } from './harness.mjs';

/**
 * @typedef {object} LoadResult
 * @property {number} rps 2xx answers a second
 * @property {number} ok
 * @property {Float64Array} latencies ms of each 2xx answer
 * @property {number} non2xx
 * @property {number} errors
 * @property {number} timeouts
 * @property {number} mismatches
 * @property {number} durationS
 * @property {number} connections
 * @property {{ p50: number, p90: number, p99: number, max: number, mean: number }} latency
 * @property {Record<string, { count: number }>} statusCodes
 * @property {string | null} firstBadBody
 * @property {number} [bodiesSent]
 * @property {number} loadCpu
 * @property {number | null} serverCpu
 * @property {number | null} otherCpu
 * @property {{ rps: number, duration_s: number, other_cpu: number | null }[]} [slices]
 */

/**
 * @param {object} o
 * @param {string} o.url            http://127.0.0.1:port (anything else is refused)
 * @param {string} o.path
 * @param {'GET'|'POST'} [o.method]
 * @param {Record<string,string>} [o.headers]
 * @param {(string|Buffer)[]} [o.bodies]  cycled, one per request
 * @param {number} [o.connections]  default 10
 * @param {number} o.durationS       time bound
 * @param {number} o.maxRequests     request-count bound
 * @param {(status:number, body:string) => boolean} [o.check] per-response check (counted in `mismatches`); optional
 * @param {number} [o.serverPid]    the server's pid, to report how busy its core was
 * @param {number} [o.firstBody]    index of the first body sent (default 0); the result's `bodiesSent` says how many followed
 * @param {() => string} [o.nextPath] the path of each request, when they differ (default: o.path)
 * @returns {Promise<LoadResult>}
 */
export async function runLoad(o) {
  const target = new URL(o.url);
  if (target.hostname !== HOST) throw new Error(`benchmarks only load ${HOST}, not ${target.hostname}`);
  const connections = o.connections ?? 10;
  const bodies = o.bodies ?? [];
  let next = o.firstBody ?? 0;
  /** @type {Record<string, string>} */
  const headers = { ...(o.headers ?? {}) };
  if (bodies.length > 0) headers['content-type'] ??= 'application/json';

  /** @type {import('autocannon').Request} */
  const request = { method: o.method ?? (bodies.length > 0 ? 'POST' : 'GET'), path: o.path };
  if (bodies.length > 0) {
    request.setupRequest = (req) => {
      req.body = bodies[next % bodies.length];
      next += 1;
      return req;
    };
  } else if (o.nextPath) {
    const nextPath = o.nextPath;
    request.setupRequest = (req) => {
      req.path = nextPath();
      return req;
    };
  }
  /** @type {string | null} */
  let firstBadBody = null;
  let mismatches = 0;
  // Every run (baseline and service alike) reads the answers: the first bad one is reported.
  request.onResponse = (status, body) => {
    if (status >= 200 && status < 300) {
      if (o.check && !o.check(status, body)) {
        mismatches += 1;
        firstBadBody ??= `${status} ${String(body).slice(0, 300)}`;
      }
    } else firstBadBody ??= `${status} ${String(body).slice(0, 300)}`;
  };

  const latencies = new Float64Array(Math.min(o.maxRequests + connections * 2, 50_000_000));
  let count = 0;
  const requestCap = Math.max(o.maxRequests, connections);
  const instance = autocannon({
    url: `${target.origin}`,
    connections,
    pipelining: 1,
    duration: o.durationS,
    maxOverallRequests: requestCap,
    timeout: 30,
    headers,
    requests: [request],
    excludeErrorStats: true,
  });
  let lastResponseAt = 0n;
  let responses = 0;
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    lastResponseAt = process.hrtime.bigint();
    // autocannon notices its own request cap only at its next one-second tick.
    if (++responses >= requestCap) instance.stop();
    if (statusCode >= 200 && statusCode < 300 && count < latencies.length) latencies[count++] = responseTime;
  });
  // A watchdog on top of autocannon's own bounds.
  const watchdog = setTimeout(() => instance.stop(), (o.durationS + 30) * 1000);
  const cpuBefore = process.cpuUsage();
  const serverCpuBefore = o.serverPid ? cpuSecondsOf(o.serverPid) : null;
  const machineBefore = machineBusySeconds();
  const wallStart = process.hrtime.bigint();
  const result = await instance;
  const machineAfter = machineBusySeconds();
  const wallS = Number(process.hrtime.bigint() - wallStart) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const serverCpuAfter = o.serverPid ? cpuSecondsOf(o.serverPid) : null;
  clearTimeout(watchdog);

  const kept = latencies.subarray(0, count);
  const ok = result['2xx'];
  // autocannon's own `duration` is whole seconds, and a run bounded by request count ends only at
  // its next one-second tick: the rate is over the time from the start to the last answer.
  const durationS = lastResponseAt > 0n ? Number(lastResponseAt - wallStart) / 1e9 : wallS;
  let sum = 0;
  for (const v of kept) sum += v;
  return {
    rps: ok / durationS,
    ok,
    latencies: kept,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches,
    durationS,
    connections,
    latency: {
      p50: percentile(kept, 50),
      p90: percentile(kept, 90),
      p99: percentile(kept, 99),
      max: count ? percentile(kept, 100) : NaN,
      mean: count ? sum / count : NaN,
    },
    statusCodes: result.statusCodeStats,
    firstBadBody,
    // bodies handed to autocannon (answered or not): where the next run starts when every body
    // may reach the service at most once (a witness signature is accepted once)
    bodiesSent: next - (o.firstBody ?? 0),
    // share of one core used during the run (CPU seconds / time to the last answer): near 1.0 means
    // that side was the bottleneck
    loadCpu: (cpu.user + cpu.system) / 1e6 / durationS,
    serverCpu: serverCpuBefore !== null && serverCpuAfter !== null ? (serverCpuAfter - serverCpuBefore) / durationS : null,
    // everything else the machine did meanwhile (other processes, steal), in cores: should be ~0
    otherCpu:
      machineBefore !== null && machineAfter !== null && serverCpuBefore !== null && serverCpuAfter !== null
        ? Math.max(0, (machineAfter - machineBefore - (cpu.user + cpu.system) / 1e6 - (serverCpuAfter - serverCpuBefore)) / durationS)
        : null,
  };
}

/**
 * One result from several runs of the same load (slices interleaved with another target's, so
 * that a slow drift of the machine's speed hits both alike): totals, time-weighted CPU shares,
 * percentiles over every latency.
 */
/**
 * @param {LoadResult[]} results
 * @returns {LoadResult}
 */
export function mergeLoads(results) {
  if (results.length === 1) return results[0];
  const sum = (/** @type {(r: LoadResult) => number} */ f) => results.reduce((a, r) => a + f(r), 0);
  const durationS = sum((r) => r.durationS);
  const ok = sum((r) => r.ok);
  const all = new Float64Array(sum((r) => r.latencies.length));
  let at = 0;
  for (const r of results) {
    all.set(r.latencies, at);
    at += r.latencies.length;
  }
  const weighted = (/** @type {(r: LoadResult) => number | null} */ f) =>
    results.every((r) => f(r) !== null) ? sum((r) => /** @type {number} */ (f(r)) * r.durationS) / durationS : null;
  let total = 0;
  for (const v of all) total += v;
  /** @type {Record<string, { count: number }>} */
  const statusCodes = {};
  for (const r of results)
    for (const [code, { count }] of Object.entries(r.statusCodes ?? {})) statusCodes[code] = { count: (statusCodes[code]?.count ?? 0) + count };
  return {
    rps: ok / durationS,
    ok,
    latencies: all,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    mismatches: sum((r) => r.mismatches),
    durationS,
    connections: results[0].connections,
    latency: {
      p50: percentile(all, 50),
      p90: percentile(all, 90),
      p99: percentile(all, 99),
      max: all.length ? percentile(all, 100) : NaN,
      mean: all.length ? total / all.length : NaN,
    },
    statusCodes,
    firstBadBody: results.find((r) => r.firstBadBody)?.firstBadBody ?? null,
    loadCpu: weighted((r) => r.loadCpu) ?? NaN,
    serverCpu: weighted((r) => r.serverCpu),
    otherCpu: weighted((r) => r.otherCpu),
    slices: results.map((r) => ({
      rps: Math.round(r.rps),
      duration_s: Math.round(r.durationS * 100) / 100,
      other_cpu: r.otherCpu === null ? null : Math.round(r.otherCpu * 100) / 100,
    })),
  };
}

/** Short description of a load result for the JSON summary. */
/** @param {LoadResult} r */
export function loadDetails(r) {
  return {
    requests_2xx: r.ok,
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    mismatches: r.mismatches,
    duration_s: Math.round(r.durationS * 100) / 100,
    connections: r.connections,
    latency_ms: Object.fromEntries(Object.entries(r.latency).map(([k, v]) => [k, Math.round(v * 1000) / 1000])),
    status_codes: r.statusCodes,
    ...(r.slices ? { slices: r.slices } : {}),
    load_generator_cpu: Math.round(r.loadCpu * 100) / 100,
    ...(r.serverCpu !== null ? { server_cpu: Math.round(r.serverCpu * 100) / 100 } : {}),
    ...(r.otherCpu !== null ? { other_cpu: Math.round(r.otherCpu * 100) / 100 } : {}),
    ...(r.firstBadBody ? { first_bad_response: r.firstBadBody } : {}),
  };
}

/** Why a load run cannot be trusted, or null: any non-2xx answer, error or failed check. */
/** @param {LoadResult} r */
export function loadProblem(r) {
  const problems = [];
  if (r.ok === 0) problems.push('no 2xx answer');
  if (r.non2xx > 0) problems.push(`${r.non2xx} non-2xx answers`);
  if (r.errors > 0) problems.push(`${r.errors} connection errors`);
  if (r.timeouts > 0) problems.push(`${r.timeouts} timeouts`);
  if (r.mismatches > 0) problems.push(`${r.mismatches} answers failed the check`);
  if (problems.length === 0) return null;
  return `${problems.join(', ')}${r.firstBadBody ? `; first: ${r.firstBadBody}` : ''}`;
}

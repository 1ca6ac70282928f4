// @ts-check
/**
 * The shared benchmark harness: paths, options, child processes (servers and probes, each in its
 * own process and, where taskset exists, on its own core), memory of a process from
 * /proc/<pid>/status, percentiles, and the report: one line per result with the absolute figure
 * and its ratio against a baseline measured in the same run, then a JSON summary that is also
 * written to bench/results/<name>.json.
 *
 * Benchmarks never assert: they measure, compare with a baseline of the same run and say PASS or
 * FAIL. Everything is bounded in time and request count and talks to 127.0.0.1 only.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BENCH_DIR = join(ROOT, 'bench');
export const LIB_DIR = join(BENCH_DIR, 'lib');
export const RESULTS_DIR = join(BENCH_DIR, 'results');

/**
 * Where the code under test is: the tree itself, or (after snapshotCode) a copy of its build
 * output. Children inherit GOVCTL_BENCH_CODE, so every process of a run loads the same code.
 */
export function codeRoot() {
  return process.env.GOVCTL_BENCH_CODE ?? ROOT;
}

/** The build outputs a benchmark loads (in codeRoot()). */
export const DIST = {
  get server() {
    return join(codeRoot(), 'dist/lib/server.js');
  },
  get core() {
    return join(codeRoot(), 'dist/lib/core.js');
  },
  get cli() {
    return join(codeRoot(), 'dist/cli/main.js');
  },
  /** the CLI entry point, `govctl` */
  get bin() {
    return join(codeRoot(), 'bin/govctl.js');
  },
};
/** The only host any benchmark talks to. */
export const HOST = '127.0.0.1';

/** Cores: the load generator (this process and the CLI processes it spawns) and the server under test. */
export const LOAD_CPU = 0;
export const SERVER_CPU = 1;

// ---------------------------------------------------------------------------------------------
// Options

const COMMON_OPTIONS = /** @type {const} */ ({
  quick: { type: 'boolean', default: false },
  'data-dir': { type: 'string' },
  'no-pin': { type: 'boolean', default: false },
  'no-snapshot': { type: 'boolean', default: false },
  connections: { type: 'string' },
  duration: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
});

/**
 * @template {NonNullable<import('node:util').ParseArgsConfig['options']>} T
 * @typedef {ReturnType<typeof parseArgs<{ options: typeof COMMON_OPTIONS & T, allowPositionals: false }>>['values']} OptionValues
 */

/**
 * Parses the common options plus `extra` (node:util parseArgs option specs).
 * Common: --quick, --data-dir DIR, --no-pin, --no-snapshot, --connections N, --duration S, --help.
 *
 * @template {NonNullable<import('node:util').ParseArgsConfig['options']>} [T={}]
 * @param {T} [extra]
 * @param {string} [usage]
 * @returns {OptionValues<T>}
 */
export function parseOptions(extra, usage = '') {
  const { values } = parseArgs({ options: { ...COMMON_OPTIONS, ...extra }, allowPositionals: false });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return /** @type {OptionValues<T>} */ (/** @type {unknown} */ (values));
}

/**
 * @template F
 * @param {string | undefined} text
 * @param {string} name
 * @param {F} fallback
 * @returns {number | F}
 */
export function positiveNumber(text, name, fallback) {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, not ${JSON.stringify(text)}`);
  return value;
}

/** A fresh directory for this run's files (databases, logs, inputs) under .bench-data/ (gitignored). */
/**
 * @param {string} name
 * @param {string} [dataDir]
 */
export function runDirectory(name, dataDir) {
  const base = resolve(dataDir ?? join(ROOT, '.bench-data'));
  const dir = join(base, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return { base, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Fails early, with the command to run, when the build output a benchmark needs is missing. */
/** @param {...string} files */
export function requireBuild(...files) {
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(`missing build output: ${missing.join(', ')}; run \`node scripts/build.mjs --no-types\` first`);
  }
}

/**
 * Copies the build output (dist/, bin/, package.json) into `<dir>/code` with node_modules linked,
 * and points codeRoot() there for this process and its children: a rebuild of the tree during a
 * long run (which deletes dist/) cannot pull the code from under it.
 */
/**
 * @param {string} dir
 * @param {string[]} required
 */
export function snapshotCode(dir, required) {
  const target = join(dir, 'code');
  for (let attempt = 1; ; attempt += 1) {
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    try {
      cpSync(join(ROOT, 'dist'), join(target, 'dist'), { recursive: true });
      cpSync(join(ROOT, 'bin'), join(target, 'bin'), { recursive: true });
      cpSync(join(ROOT, 'package.json'), join(target, 'package.json'));
      symlinkSync(join(ROOT, 'node_modules'), join(target, 'node_modules'), 'dir');
      const missing = required.map((f) => f.replace(ROOT, target)).filter((f) => !existsSync(f));
      if (missing.length > 0) throw new Error(`missing ${missing.join(', ')}`);
      process.env.GOVCTL_BENCH_CODE = target;
      return target;
    } catch (error) {
      if (attempt >= 3) throw new Error(`could not copy the build output (a build running?): ${error instanceof Error ? error.message : String(error)}`);
      spawnSync('sleep', ['2']);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// CPU pinning

let pinning = false;

/** Whether `taskset` can pin processes here (Linux, 2+ cores, util-linux installed). */
export function canPin() {
  const probe = spawnSync('taskset', ['-c', String(SERVER_CPU), 'true'], { stdio: 'ignore' });
  return probe.status === 0;
}

/**
 * Pins this process (every thread) to the load core; children inherit it. Servers are started on
 * the other core (startChild with `cpu`). Returns whether pinning is on.
 */
/** @param {boolean} disabled */
export function pinLoadGenerator(disabled) {
  if (disabled || !canPin()) return (pinning = false);
  const result = spawnSync('taskset', ['-a', '-p', '-c', String(LOAD_CPU), String(process.pid)], { stdio: 'ignore' });
  pinning = result.status === 0;
  return pinning;
}

export function isPinned() {
  return pinning;
}

// ---------------------------------------------------------------------------------------------
// Child processes

/**
 * A message a child sends over IPC: its first is `{ type: 'ready', ... }` (or `{ type: 'error',
 * message }`); what else it holds is the child's to say.
 * @typedef {{ type?: string, message?: string, [key: string]: any }} ChildMessage
 */

/**
 * @typedef {object} ChildOptions
 * @property {number} [cpu] the core to pin the child to
 * @property {NodeJS.ProcessEnv} [env] added to this process's environment
 * @property {string} [logFile] where stdout and stderr go (default: inherited)
 * @property {number} [timeoutMs] how long the child has to send its first message
 * @property {string[]} [nodeArgs] node's own options
 */

/**
 * @typedef {object} ChildHandle
 * @property {number} pid
 * @property {ChildMessage} info the child's first message
 * @property {import('node:child_process').ChildProcess} child
 * @property {(message: object, timeoutMs?: number) => Promise<ChildMessage>} request sends a message and waits for the next answer
 * @property {(graceMs?: number) => Promise<{ code: number | null, signal: NodeJS.Signals | null }>} stop
 */

/**
 * Starts `node <script> ...args` with an IPC channel and waits for its first message
 * (`{ type: 'ready', ... }`), bounded by `timeoutMs`. stdout/stderr go to `logFile` when given.
 * With `cpu` and pinning on, the child runs under `taskset -c <cpu>`.
 *
 * @param {string} script
 * @param {string[]} [args]
 * @param {ChildOptions} [options]
 * @returns {Promise<ChildHandle>}
 */
export async function startChild(script, args = [], { cpu, env, logFile, timeoutMs = 60_000, nodeArgs = [] } = {}) {
  const command = [process.execPath, ...nodeArgs, script, ...args];
  const pinned = pinning && cpu !== undefined;
  const argv = pinned ? ['taskset', '-c', String(cpu), ...command] : command;
  const logFd = logFile ? openSync(logFile, 'a') : 'inherit';
  const child = spawn(argv[0], argv.slice(1), {
    stdio: ['ignore', logFd, logFd, 'ipc'],
    env: { ...process.env, ...env },
  });
  if (typeof logFd === 'number') closeSync(logFd);

  /** @type {{ resolve: (message: ChildMessage) => void, reject: (error: Error) => void }[]} */
  const waiters = [];
  /** @type {ChildMessage[]} */
  const messages = [];
  child.on('message', (/** @type {ChildMessage} */ message) => {
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(message);
    else messages.push(message);
  });
  /** @type {{ code: number | null, signal: NodeJS.Signals | null } | null} */
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
    for (const waiter of waiters.splice(0))
      waiter.reject(new Error(`${script} exited (${signal ?? code}) before answering${logFile ? `; see ${logFile}` : ''}`));
  });

  /**
   * @param {number} timeout
   * @returns {Promise<ChildMessage>}
   */
  function next(timeout) {
    const queued = messages.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (exited) return Promise.reject(new Error(`${script} has exited (${exited.signal ?? exited.code})${logFile ? `; see ${logFile}` : ''}`));
    return new Promise((resolvePromise, reject) => {
      const waiter = {
        resolve: (/** @type {ChildMessage} */ m) => {
          clearTimeout(timer);
          resolvePromise(m);
        },
        reject: (/** @type {Error} */ e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`${script} did not answer within ${timeout} ms`));
      }, timeout);
      waiters.push(waiter);
    });
  }

  let info;
  try {
    info = await next(timeoutMs);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  if (info?.type === 'error') {
    child.kill('SIGKILL');
    throw new Error(`${script}: ${info.message}`);
  }
  // With taskset the pid we care about is taskset's: it execs node, so the pid is node's.
  return {
    pid: /** @type {number} */ (child.pid),
    info,
    child,
    /** sends a message and waits for the next answer */
    async request(/** @type {object} */ message, timeout = 600_000) {
      child.send(message);
      const answer = await next(timeout);
      if (answer?.type === 'error') throw new Error(`${script}: ${answer.message}`);
      return answer;
    },
    /** asks the child to stop (SIGTERM), then kills it after `graceMs` */
    stop(graceMs = 10_000) {
      if (exited) return Promise.resolve(exited);
      return new Promise((resolvePromise) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          resolvePromise({ code, signal });
        });
        child.kill('SIGTERM');
      });
    },
  };
}

/** Runs `node <script> ...args` to completion (bounded) and returns its last IPC message. */
/**
 * @param {string} script
 * @param {string[]} [args]
 * @param {ChildOptions} [options]
 */
export async function runChild(script, args = [], options = {}) {
  const handle = await startChild(script, args, options);
  await handle.stop(5_000);
  return handle.info;
}

// ---------------------------------------------------------------------------------------------
// Memory

/** VmRSS and VmHWM (peak) of a live process, in bytes, or null once it has gone. */
/**
 * @param {number} pid
 * @returns {{ rss: number | null, hwm: number | null } | null}
 */
export function memoryOf(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kb = (/** @type {string} */ field) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : null;
  };
  const rss = kb('VmRSS');
  const hwm = kb('VmHWM');
  return rss === null && hwm === null ? null : { rss, hwm };
}

/**
 * Polls a process's memory every `intervalMs` until stopped or until it exits. `peak` is the
 * largest of every VmHWM and VmRSS seen (VmHWM is the kernel's own high-water mark, so a spike
 * between two samples is still counted as long as the process is alive at a later sample).
 * `cpuSeconds` is the process's CPU time at the last sample.
 */
/**
 * @param {number} pid
 * @param {number} [intervalMs]
 */
export function sampleMemory(pid, intervalMs = 50) {
  let peak = 0;
  /** @type {{ rss: number | null, hwm: number | null } | null} */
  let last = null;
  let samples = 0;
  /** @type {number | null} */
  let cpuSeconds = null;
  const take = () => {
    const memory = memoryOf(pid);
    if (!memory) return;
    cpuSeconds = cpuSecondsOf(pid) ?? cpuSeconds;
    samples += 1;
    last = memory;
    peak = Math.max(peak, memory.hwm ?? 0, memory.rss ?? 0);
  };
  take();
  const timer = setInterval(take, intervalMs);
  timer.unref();
  return {
    get peak() {
      return peak;
    },
    get last() {
      return last;
    },
    /** takes one last sample (when the process is still there) and stops */
    stop() {
      take();
      clearInterval(timer);
      return { peak, last, samples, cpuSeconds };
    },
  };
}

export const MiB = 1024 * 1024;

/** Busy CPU seconds of the whole machine so far (all cores, from /proc/stat), or null off Linux. */
export function machineBusySeconds() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return null;
  }
}

/**
 * Waits (bounded) until the machine is quiet: other processes using less than `threshold` cores
 * over one second, measured while this benchmark itself is idle. Other work on a 2-core machine
 * (a test run, a build) would otherwise land in the figures. Returns the seconds waited and the
 * load seen last (so a result measured on a busy machine says so).
 */
export async function waitForQuiet({ maxWaitS = 120, threshold = 0.15 } = {}) {
  const start = Date.now();
  for (;;) {
    const before = machineBusySeconds();
    const own = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 1000));
    const after = machineBusySeconds();
    if (before === null || after === null) return { waitedS: 0, otherCores: null };
    const mine = process.cpuUsage(own);
    const busy = Math.max(0, after - before - (mine.user + mine.system) / 1e6);
    const waitedS = (Date.now() - start) / 1000;
    if (busy < threshold || waitedS >= maxWaitS) {
      if (waitedS > 1.5) progress(`waited ${waitedS.toFixed(0)} s for other processes to go quiet (now ${busy.toFixed(2)} cores busy)`);
      return { waitedS, otherCores: busy };
    }
  }
}

/** CPU seconds of this process and its reaped children (utime+stime+cutime+cstime). */
function selfAndChildrenCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return null;
  }
}

/**
 * Measures the CPU the rest of the machine used (in cores) between start and stop: everything but
 * this process, its finished children, and the live processes `pids` (servers).
 */
/** @param {number[]} [pids] */
export function otherCpuMeter(pids = []) {
  const t0 = process.hrtime.bigint();
  const machine0 = machineBusySeconds();
  const self0 = selfAndChildrenCpuSeconds();
  const pids0 = pids.map((pid) => cpuSecondsOf(pid) ?? 0);
  return () => {
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const machine1 = machineBusySeconds();
    const self1 = selfAndChildrenCpuSeconds();
    if (machine0 === null || self0 === null || machine1 === null || self1 === null) return null;
    const ours = self1 - self0 + pids.reduce((sum, pid, i) => sum + ((cpuSecondsOf(pid) ?? pids0[i]) - pids0[i]), 0);
    return Math.max(0, (machine1 - machine0 - ours) / wall);
  };
}

/** CPU seconds (user + system) a live process has used so far, from /proc/<pid>/stat; null when gone. */
/**
 * @param {number} pid
 * @returns {number | null}
 */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11] = utime, fields[12] = stime (fields 14 and 15 of proc(5)), in clock ticks (100 Hz on Linux)
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** The p-th percentile (0–100) of numbers, by nearest rank on a sorted copy. */
/**
 * @param {ArrayLike<number> & Iterable<number>} values
 * @param {number} p
 */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = values instanceof Float64Array ? values.slice().sort() : Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** min, mean, median, p90, p99, max, stddev of numbers. */
/**
 * @param {Iterable<number>} values
 * @returns {{ n: number, min?: number, mean?: number, median?: number, p90?: number, p99?: number, max?: number, stddev?: number }}
 */
export function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return { n: 0 };
  const at = (/** @type {number} */ p) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))];
  let sum = 0;
  for (const v of sorted) sum += v;
  const mean = sum / n;
  let squares = 0;
  for (const v of sorted) squares += (v - mean) ** 2;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return { n, min: sorted[0], mean, median, p90: at(90), p99: at(99), max: sorted[n - 1], stddev: Math.sqrt(squares / n) };
}

/**
 * @param {number} value
 * @param {number} [digits]
 */
export function round(value, digits = 2) {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

// ---------------------------------------------------------------------------------------------
// Timing of whole processes (hyperfine-like)

/**
 * Runs each command `runs` times, interleaved (A B C A B C …) after `warmup` rounds, with
 * spawnSync; returns per-command wall-time statistics in ms and the exit codes seen.
 * @param {{ name: string, argv: string[], env?: NodeJS.ProcessEnv, okCodes?: (number | null)[] }[]} commands
 * @param {{ runs?: number, warmup?: number, timeoutMs?: number, cwd?: string, pids?: number[] }} [options]
 */
export function timeCommands(commands, { runs = 30, warmup = 3, timeoutMs = 60_000, cwd = ROOT, pids = [] } = {}) {
  /** @type {Map<string, number[]>} */
  const times = new Map(commands.map((c) => [c.name, []]));
  /** @type {Map<string, Map<number | string, number>>} */
  const codes = new Map(commands.map((c) => [c.name, new Map()]));
  /** @type {Map<string, string | null>} */
  const failures = new Map(commands.map((c) => [c.name, null]));
  /** @type {(() => number | null) | null} */
  let other = null;
  for (let round = 0; round < warmup + runs; round += 1) {
    if (round === warmup) other = otherCpuMeter(pids);
    for (const command of commands) {
      const start = process.hrtime.bigint();
      const result = spawnSync(command.argv[0], command.argv.slice(1), {
        cwd,
        env: command.env ?? process.env,
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: timeoutMs,
      });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const code = result.status ?? (result.signal ? `signal ${result.signal}` : 'error');
      const ok = (command.okCodes ?? [0]).includes(result.status);
      if (!ok && !failures.get(command.name)) {
        failures.set(command.name, `exit ${code}: ${(result.stderr?.toString() ?? result.error?.message ?? '').trim().slice(0, 400)}`);
      }
      if (round < warmup) continue;
      times.get(command.name)?.push(ms);
      const seen = /** @type {Map<number | string, number>} */ (codes.get(command.name));
      seen.set(code, (seen.get(code) ?? 0) + 1);
    }
  }
  const otherCores = other ? other() : null;
  return Object.fromEntries(
    commands.map((c) => [
      c.name,
      { ...summarize(times.get(c.name) ?? []), exitCodes: Object.fromEntries(codes.get(c.name) ?? []), failure: failures.get(c.name), otherCores },
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// The report

/** The commit the tree is at and whether src/ has uncommitted changes (what was measured). */
function sourceState() {
  const git = (/** @type {string[]} */ ...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return null;
  const dirty = git('status', '--porcelain', '--', 'src', 'bin', 'scripts').stdout.split('\n').filter(Boolean).length;
  return { commit: head.stdout.trim(), uncommitted_files_in_src: dirty };
}

/** @type {Record<'>=' | '<=' | '<' | '>', (a: number, b: number) => boolean>} */
const COMPARE = {
  '>=': (a, b) => a >= b,
  '<=': (a, b) => a <= b,
  '<': (a, b) => a < b,
  '>': (a, b) => a > b,
};

/** @param {unknown} value */
function format(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return String(Math.round(value));
  if (abs >= 100) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

/**
 * Collects results, prints one line each:
 *   `name: value unit (ratio X.XX vs <baseline>, target ≥ T) PASS|FAIL`
 * and at the end a JSON summary (stdout and bench/results/<name>.json).
 */
export class Report {
  /**
   * @param {string} name
   * @param {Record<string, unknown>} [meta]
   */
  constructor(name, meta = {}) {
    this.name = name;
    this.meta = { started_at: new Date().toISOString(), node: process.version, host: HOST, pinned: isPinned(), source: sourceState(), ...meta };
    /** @type {Record<string, unknown>[]} */
    this.results = [];
    /** @type {Record<string, unknown>} */
    this.figures = {};
    /** @type {string[]} */
    this.notes = [];
  }

  /**
   * A result compared with a baseline of this run: ratio = value / baselineValue, checked
   * against `target` with `op`. For an absolute limit, pass the limit as the baseline
   * (baselineLabel "limit 20 ms") with target 1.
   * @param {{ name: string, value: number, unit: string, baselineValue: number, baselineLabel: string, target: number, op?: '>='|'<='|'<'|'>', details?: unknown }} result
   */
  result({ name, value, unit, baselineValue, baselineLabel, target, op = '>=', details }) {
    const ratio = value / baselineValue;
    const valid = Number.isFinite(value) && Number.isFinite(ratio);
    const pass = valid && COMPARE[op](ratio, target);
    const shownOp = { '>=': '≥', '<=': '≤', '<': '<', '>': '>' }[op];
    const line = `${name}: ${format(value)} ${unit} (ratio ${valid ? ratio.toFixed(2) : 'n/a'} vs ${baselineLabel}, target ${shownOp} ${target.toFixed(2)}) ${pass ? 'PASS' : 'FAIL'}`;
    process.stdout.write(`${line}\n`);
    const entry = {
      name,
      value: round(value, 4),
      unit,
      baseline: baselineLabel,
      baseline_value: round(baselineValue, 4),
      ratio: valid ? round(ratio, 4) : null,
      target: `${op} ${target}`,
      pass,
      ...(details ? { details } : {}),
    };
    this.results.push(entry);
    return entry;
  }

  /** A figure without a target (a baseline, a detail): `name: value unit`. */
  /**
   * @param {string} name
   * @param {number} value
   * @param {string} unit
   * @param {{ note?: string, [key: string]: unknown }} [details]
   */
  figure(name, value, unit, details) {
    process.stdout.write(`  ${name}: ${format(value)} ${unit}${details?.note ? `  (${details.note})` : ''}\n`);
    this.figures[name] = { value: round(value, 4), unit, ...(details ? { details } : {}) };
  }

  /** @param {string} text */
  note(text) {
    process.stdout.write(`  note: ${text}\n`);
    this.notes.push(text);
  }

  /** A result that could not be measured: counted as FAIL, with the reason. */
  /**
   * @param {string} name
   * @param {string} reason
   */
  failed(name, reason) {
    process.stdout.write(`${name}: not measured (${reason}) FAIL\n`);
    this.results.push({ name, value: null, pass: false, error: reason });
  }

  /** Prints the JSON summary, writes bench/results/<name>.json, returns the exit code (0 all pass). */
  finish() {
    const summary = {
      benchmark: this.name,
      ...this.meta,
      finished_at: new Date().toISOString(),
      pass: this.results.length > 0 && this.results.every((r) => r.pass),
      results: this.results,
      figures: this.figures,
      notes: this.notes,
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `${this.name}.json`);
    writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    process.stderr.write(`summary written to ${file.slice(ROOT.length + 1)}\n`);
    return summary.pass ? 0 : 1;
  }
}

/** Section heading on stderr (progress, not results). */
/** @param {string} text */
export function progress(text) {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

/**
 * Injected streams, so tests run commands in memory: data to stdout, everything else to stderr, the TTY checked
 * per stream, colour decided per stream. Commands write through {@link OutputStream.write}, which
 * buffers briefly, honours backpressure (large piped output is never truncated), and turns a reader
 * that went away (EPIPE, `govctl … | head -1`) into a quiet end of the run.
 */
import { Readable, Writable } from 'node:stream';
import { Chalk, type ChalkInstance } from 'chalk';
import { PipeClosedError } from './errors.js';

/** Colour levels as chalk counts them: 0 none, 1 basic, 2 256 colours, 3 truecolor. */
export type ColorLevel = 0 | 1 | 2 | 3;

/** One output stream as commands see it. */
export interface OutputStream {
  /** whether a terminal is attached (decides tables vs tab-separated lines, progress) */
  readonly isTTY: boolean;
  /** terminal width, when known */
  readonly columns: number | undefined;
  /** colours for this stream (a no-op chalk when colour is off) */
  readonly color: ChalkInstance;
  readonly colorEnabled: boolean;
  /**
   * Queues text; resolves once the stream can take more. Throws {@link PipeClosedError} once the
   * reader has gone away (stdout only; stderr failures are ignored).
   */
  write(text: string): Promise<void>;
  /** Writes out everything queued. */
  flush(): Promise<void>;
  /** Hands what is queued to the stream now, without waiting (keeps order across two streams). */
  pushPending(): void;
  /** The underlying stream, for libraries that draw on it themselves (progress bars). */
  readonly raw: NodeJS.WritableStream;
}

/** The streams of one run. */
export interface IO {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly stdinIsTTY: boolean;
  /** Writes out both output streams. */
  flush(): Promise<void>;
}

/** What decides colour (docs/cli.md "Output"): in this order of precedence. */
export interface ColorInputs {
  /** `--no-color` was given */
  noColorFlag: boolean;
  env: NodeJS.ProcessEnv;
  isTTY: boolean;
}

/**
 * The colour level of one stream: `--no-color`, then `NO_COLOR` (any non-empty value), then
 * `FORCE_COLOR` (`0`/`false` off, `2`, `3`, anything else basic), then `TERM=dumb`, then the TTY.
 */
export function colorLevel({ noColorFlag, env, isTTY }: ColorInputs): ColorLevel {
  if (noColorFlag) return 0;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '0' || force === 'false') return 0;
    if (force === '2') return 2;
    if (force === '3') return 3;
    return 1;
  }
  if (env.TERM === 'dumb') return 0;
  if (!isTTY) return 0;
  const colorTerm = env.COLORTERM ?? '';
  if (colorTerm === 'truecolor' || colorTerm === '24bit') return 3;
  if (/-256(color)?$/i.test(env.TERM ?? '')) return 2;
  return 1;
}

/** Above this many queued characters a write goes out at once and waits for the stream. */
const HIGH_WATER = 64 * 1024;

/** Options of {@link createOutputStream}. */
export interface OutputStreamOptions {
  isTTY: boolean;
  columns?: number | undefined;
  colorLevel: ColorLevel;
  /** stdout: a closed pipe ends the run (PipeClosedError); stderr: failures are ignored */
  failOnClosed: boolean;
  /**
   * Called before text is queued: pushes out what the other stream of the run holds, so that when
   * both reach one terminal, lines appear in the order they were written.
   */
  beforeQueue?: () => void;
}

function isClosedPipe(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END';
}

/**
 * Wraps a writable stream. Text is gathered until the current turn of the event loop ends (so a
 * loop of small writes costs one system call) or until {@link HIGH_WATER} characters are queued;
 * when the stream signals backpressure the next write waits for `drain`.
 */
export function createOutputStream(stream: NodeJS.WritableStream, options: OutputStreamOptions): OutputStream {
  let queued: string[] = [];
  let queuedLength = 0;
  let scheduled = false;
  let draining: Promise<void> | undefined;
  let closed = false;

  // A reader that went away (EPIPE) is not worth a stack trace, and any other error of an output
  // stream is as unrecoverable: both end the output quietly (stdout: PipeClosedError, exit 0).
  (stream as NodeJS.EventEmitter).on('error', () => {
    closed = true;
  });

  function waitForDrain(): Promise<void> {
    draining ??= new Promise<void>((resolve) => {
      const done = () => {
        stream.removeListener('drain', done);
        stream.removeListener('close', done);
        stream.removeListener('error', done);
        draining = undefined;
        resolve();
      };
      stream.on('drain', done);
      stream.on('close', done);
      stream.on('error', done);
    });
    return draining;
  }

  function push(): boolean {
    scheduled = false;
    if (queuedLength === 0) return true;
    const text = queued.length === 1 ? queued[0] : queued.join('');
    queued = [];
    queuedLength = 0;
    if (closed) return true;
    try {
      return stream.write(text);
    } catch (error) {
      if (!isClosedPipe(error)) throw error;
      closed = true;
      return true;
    }
  }

  function checkClosed(): void {
    if (closed && options.failOnClosed) throw new PipeClosedError();
  }

  return {
    isTTY: options.isTTY,
    columns: options.columns,
    color: new Chalk({ level: options.colorLevel }),
    colorEnabled: options.colorLevel > 0,
    raw: stream,
    async write(text: string): Promise<void> {
      checkClosed();
      if (text === '') return;
      if (draining) await draining;
      checkClosed();
      options.beforeQueue?.();
      queued.push(text);
      queuedLength += text.length;
      if (queuedLength >= HIGH_WATER) {
        if (!push()) await waitForDrain();
        checkClosed();
      } else if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          if (scheduled && !push()) void waitForDrain();
        });
      }
    },
    async flush(): Promise<void> {
      if (draining) await draining;
      if (!push()) await waitForDrain();
      checkClosed();
    },
    pushPending(): void {
      if (queuedLength > 0 && !push()) void waitForDrain();
    },
  };
}

/**
 * Runs `print` and says whether stdout's reader went away meanwhile, instead of ending the run
 * (PipeClosedError, exit 0), for the commands whose exit code is a verdict (`gates check`,
 * `verify`) and those that write many records (results.ts): a reader that stops early
 * (`| head -1`) must not turn a failure into 0, nor stop an import half-way. The caller decides
 * its exit code from what it did; on success it simply returns.
 *
 * @example
 * const { closed } = await printBeforeVerdict(() => printTable(out, columns, rows));
 * if (failed > 0) throw new SignatureMismatchError(…); // exit 2 whether or not the reader stayed
 */
export async function printBeforeVerdict(print: () => Promise<void>): Promise<{ closed: boolean }> {
  try {
    await print();
    return { closed: false };
  } catch (error) {
    if (error instanceof PipeClosedError) return { closed: true };
    throw error;
  }
}

/** The process's streams. `noColorFlag` is read when colour is first needed (after parsing). */
export function createProcessIO(noColorFlag: () => boolean, env: NodeJS.ProcessEnv = process.env): IO {
  return createIO({
    stdout: process.stdout,
    stderr: process.stderr,
    get stdin() {
      return process.stdin;
    },
    env,
    noColorFlag,
  });
}

/** Options of {@link createIO}. */
export interface CreateIOOptions {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  noColorFlag: () => boolean;
}

/** IO over given streams; each output stream is created on first use so that `--no-color` is known by then. */
export function createIO(options: CreateIOOptions): IO {
  let stdout: OutputStream | undefined;
  let stderr: OutputStream | undefined;
  const make = (stream: CreateIOOptions['stdout'], failOnClosed: boolean, other: () => OutputStream | undefined): OutputStream => {
    const isTTY = stream.isTTY === true;
    return createOutputStream(stream, {
      isTTY,
      columns: isTTY ? stream.columns : undefined,
      colorLevel: colorLevel({ noColorFlag: options.noColorFlag(), env: options.env, isTTY }),
      failOnClosed,
      // At most one stream ever holds queued text, so the flush order below cannot reorder lines.
      beforeQueue: () => other()?.pushPending(),
    });
  };
  const io: IO = {
    get stdout() {
      return (stdout ??= make(options.stdout, true, () => stderr));
    },
    get stderr() {
      return (stderr ??= make(options.stderr, false, () => stdout));
    },
    // Read when asked: touching process.stdin opens it, which a command that never reads it should not pay for.
    get stdin() {
      return options.stdin;
    },
    get stdinIsTTY() {
      return options.stdin.isTTY === true;
    },
    async flush() {
      // stderr first: it carries the summary of what stdout holds, and cannot fail the run.
      if (stderr) await stderr.flush();
      if (stdout) await stdout.flush();
    },
  };
  return io;
}

/** An IO whose output lands in strings: for tests, and for rendering in-process. */
export interface MemoryIO extends IO {
  stdoutText(): string;
  stderrText(): string;
}

/** Options of {@link createMemoryIO}. */
export interface MemoryIOOptions {
  /** whether stdout and stderr claim to be terminals (default false) */
  isTTY?: boolean;
  stdoutIsTTY?: boolean;
  stderrIsTTY?: boolean;
  columns?: number;
  /** what stdin holds (default: nothing) */
  stdin?: string | Buffer;
  stdinIsTTY?: boolean;
  env?: NodeJS.ProcessEnv;
  noColor?: boolean;
}

/** In-memory IO; colour follows the same rules as for a process. */
export function createMemoryIO(options: MemoryIOOptions = {}): MemoryIO {
  const sink = () => {
    const chunks: Buffer[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        callback();
      },
    });
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = sink();
  const err = sink();
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]);
  Object.assign(out.stream, { isTTY: options.stdoutIsTTY ?? options.isTTY ?? false, columns: options.columns ?? 100 });
  Object.assign(err.stream, { isTTY: options.stderrIsTTY ?? options.isTTY ?? false, columns: options.columns ?? 100 });
  Object.assign(stdin, { isTTY: options.stdinIsTTY ?? false });
  const io = createIO({ stdout: out.stream, stderr: err.stream, stdin, env: options.env ?? {}, noColorFlag: () => options.noColor ?? false });
  return Object.assign(io, { stdoutText: out.text, stderrText: err.text });
}

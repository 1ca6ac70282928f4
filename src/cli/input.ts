/**
 * Reading inputs: a file or `-` (stdin). A file that is missing or unreadable is exit 66; JSON
 * that does not parse is 65. Records are read losslessly (docs/wire-format.md): `85.0` stays a float and big
 * integers keep every digit, so signatures cover what the user wrote.
 *
 * Two readers: {@link readInputText} reads everything (sign, verify: one object, an array or NDJSON
 * through core's `parseJsonDocuments`), and {@link readRecordStream} reads NDJSON line by line in
 * constant memory (import, attest batch); a JSON array is read whole, since it is one document.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { JsonSyntaxError, parseJsonDocuments, parseJsonLossless, type JsonValue } from '../core/canonical-json.js';
import { DataError, InputFileError, UsageError } from './errors.js';
import type { Factory } from './factory.js';
import { displayPath } from './settings.js';

/** An opened input: its bytes as a stream, a name for messages, and its size when it is a file. */
export interface OpenedInput {
  stream: NodeJS.ReadableStream;
  /** `stdin` or the file's path as given */
  name: string;
  /** bytes, for a regular file (progress bars); undefined for stdin and pipes */
  size?: number;
}

/** The reasons a file cannot be read, as people say them. */
function unreadable(path: string, error: unknown): InputFileError {
  const code = (error as { code?: unknown }).code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory'
          : (error as Error).message;
  return new InputFileError(`cannot read ${displayPath(path)}: ${why}`, { hint: 'check the path, or give - to read stdin' });
}

/**
 * Opens a file for reading and learns its size; a directory or an unreadable file is an InputFileError.
 * A relative path is the run's (`cwd`), not the process's; messages name the file as it was given.
 */
async function openFile(file: string, cwd: string): Promise<{ handle: FileHandle; size: number | undefined }> {
  let handle: FileHandle;
  try {
    handle = await open(resolve(cwd, file), 'r');
  } catch (error) {
    throw unreadable(file, error);
  }
  let size: number | undefined;
  try {
    const info = await handle.stat();
    if (info.isDirectory()) {
      await handle.close();
      throw unreadable(file, Object.assign(new Error('is a directory'), { code: 'EISDIR' }));
    }
    if (info.isFile()) size = info.size;
  } catch (error) {
    if (error instanceof InputFileError) throw error;
    await handle.close();
    throw unreadable(file, error);
  }
  return { handle, size };
}

/** Chunk size for {@link openChunks}: large reads into one buffer beat a stream's fresh buffers. */
const CHUNK_BYTES = 4 << 20;

/**
 * Like {@link openInput}, but a file's bytes come as chunks of two reused buffers: each chunk is
 * valid only until the next is asked for. The next chunk is read (on libuv's thread pool) while the
 * consumer works on this one, so hashing a large file overlaps with reading it; stdin stays a stream.
 */
export async function openChunks(
  file: string | undefined,
  deps: Factory,
  purpose: string,
): Promise<{ chunks: AsyncIterable<Uint8Array>; name: string; size?: number }> {
  if (file === undefined || file === '-') {
    const opened = await openInput(file, deps, purpose, 1 << 20);
    return { chunks: opened.stream as AsyncIterable<Uint8Array>, name: opened.name };
  }
  const { handle, size } = await openFile(file, deps.cwd);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
    // One read in flight at a time, into the buffer the consumer is not holding. It never rejects
    // (a failure is its value): nobody awaits it until the consumer asks for the next chunk.
    const readInto = (buffer: Buffer): Promise<number | { error: unknown }> =>
      handle.read(buffer, 0, CHUNK_BYTES, null).then(
        ({ bytesRead }) => bytesRead,
        (error: unknown) => ({ error }),
      );
    let pending: Promise<number | { error: unknown }> | undefined = readInto(buffers[0]);
    try {
      for (let i = 0; ; i += 1) {
        const bytesRead = await pending;
        if (typeof bytesRead !== 'number') {
          pending = undefined;
          throw unreadable(file!, bytesRead.error);
        }
        if (bytesRead === 0) {
          pending = undefined;
          return;
        }
        const buffer = buffers[i % 2];
        pending = readInto(buffers[(i + 1) % 2]);
        yield bytesRead === CHUNK_BYTES ? buffer : buffer.subarray(0, bytesRead);
      }
    } finally {
      // A consumer that stops early leaves a read in flight: let it land before closing the file.
      await pending;
      await handle.close();
    }
  }
  return { chunks: chunks(), name: file, ...(size !== undefined ? { size } : {}) };
}

/**
 * Opens a file or stdin (`-`, or nothing when stdin is not a terminal).
 * @param purpose what the input is for, in messages ("the records")
 * @throws InputFileError (66) for a missing or unreadable file; UsageError (64) when no file is
 *   given and stdin is a terminal
 */
export async function openInput(file: string | undefined, deps: Factory, purpose: string, highWaterMark = 1 << 16): Promise<OpenedInput> {
  if (file === undefined || file === '-') {
    if (file === undefined && deps.io.stdinIsTTY) {
      throw new UsageError(`give ${purpose} as a file, or pipe them into stdin`, { hint: 'use - to read stdin explicitly' });
    }
    return { stream: deps.claimStdin(purpose), name: 'stdin' };
  }
  const { handle, size } = await openFile(file, deps.cwd);
  // The stream owns the handle and closes it at the end (or when destroyed).
  const stream = handle.createReadStream({ highWaterMark, autoClose: true });
  stream.on('error', () => undefined); // read errors surface through the iterator
  return { stream, name: file, size };
}

/** Reads a whole input as UTF-8. */
export async function readInputText(file: string | undefined, deps: Factory, purpose: string): Promise<{ text: string; name: string }> {
  const input = await openInput(file, deps, purpose);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of input.stream as AsyncIterable<Buffer | string>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  } catch (error) {
    throw unreadable(input.name, error);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), name: input.name };
}

/** Reads one object, an array or NDJSON (core's `parseJsonDocuments`); bad JSON is 65. */
export async function readJsonDocuments(file: string | undefined, deps: Factory, purpose: string): Promise<JsonValue[]> {
  const { text, name } = await readInputText(file, deps, purpose);
  try {
    return parseJsonDocuments(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      throw new DataError(`${name === 'stdin' ? 'stdin' : displayPath(name)} is not valid JSON: ${error.message}`, {
        code: 'invalid_json',
        hint: 'give one JSON object, an array, or one object per line',
      });
    }
    throw error;
  }
}

/** One item of a record stream: a parsed value, or the JSON error of its line. */
export type StreamItem = { index: number; value: JsonValue } | { index: number; error: JsonSyntaxError; line: number };

const BLANK = /^[ \t\r]*$/;

/**
 * Reads records one at a time: NDJSON line by line (constant memory, whatever the size), or a JSON
 * array, or a single (possibly pretty-printed) object, which are read whole. A line that is not
 * JSON is yielded as an error so that the caller can report it and go on.
 *
 * @param onBytes called with the running count of bytes read (progress)
 * @param signal ends the stream early (Ctrl-C), also while it waits for input that has not come
 * @throws DataError (65) when a whole-document input is not JSON; InputFileError (66) on a read error
 */
export async function* readRecordStream(input: OpenedInput, onBytes?: (bytes: number) => void, signal?: AbortSignal): AsyncGenerator<StreamItem> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let bytes = 0;
  let index = 0;
  let lineNumber = 0;
  let first = true;
  let whole: string | undefined;
  const iterator = (input.stream as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();

  // One abort promise per read, its listener removed after: racing every read against one
  // long-lived promise would keep every chunk read reachable from it (memory grew with the input).
  const nextOrAbort = async (): Promise<IteratorResult<Buffer | string> | 'aborted'> => {
    if (!signal) return iterator.next();
    if (signal.aborted) return 'aborted';
    let onAbort: () => void = () => {};
    const aborted = new Promise<'aborted'>((resolve) => {
      onAbort = () => resolve('aborted');
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([iterator.next(), aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };
  const next = async (): Promise<string | undefined> => {
    let result: IteratorResult<Buffer | string> | 'aborted';
    try {
      result = await nextOrAbort();
    } catch (error) {
      throw unreadable(input.name, error);
    }
    if (result === 'aborted' || result.done) return undefined;
    const chunk = typeof result.value === 'string' ? Buffer.from(result.value) : result.value;
    bytes += chunk.length;
    onBytes?.(bytes);
    return decoder.write(chunk);
  };

  for (;;) {
    const text = whole === undefined ? await next() : undefined;
    if (text === undefined) break;
    pending += text;
    if (first) {
      pending = pending.replace(/^\ufeff/, '');
      const start = pending.search(/\S/);
      if (start === -1) continue;
      first = false;
      if (pending[start] === '[') {
        whole = pending;
        break;
      }
    }
    let start = 0;
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      const line = pending.slice(start, newline);
      start = newline + 1;
      lineNumber++;
      if (!BLANK.test(line)) {
        const item = parseLine(line, index, lineNumber);
        // The first record does not end on its line: one pretty-printed document, read whole.
        if (index === 0 && 'error' in item && item.error.position >= line.trimEnd().length) {
          whole = pending;
          break;
        }
        yield item;
        index++;
      }
      newline = pending.indexOf('\n', start);
    }
    if (whole === undefined) pending = pending.slice(start);
    if (whole !== undefined) break;
  }

  if (whole !== undefined) {
    for (let text = await next(); text !== undefined; text = await next()) whole += text;
    whole += decoder.end();
    let values: JsonValue[];
    try {
      values = parseJsonDocuments(whole);
    } catch (error) {
      if (error instanceof JsonSyntaxError) {
        throw new DataError(`${input.name === 'stdin' ? 'stdin' : displayPath(input.name)} is not valid JSON: ${error.message}`, { code: 'invalid_json' });
      }
      throw error;
    }
    for (const value of values) yield { index: index++, value };
    return;
  }

  pending += decoder.end();
  // Still holding line breaks only when no line was split off: an input of blank lines, no record.
  if (!BLANK.test(pending) && !(first && pending.search(/\S/) === -1)) yield parseLine(pending, index, lineNumber + 1);
}

function parseLine(line: string, index: number, lineNumber: number): StreamItem {
  try {
    return { index, value: parseJsonLossless(line) };
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      return { index, line: lineNumber, error: new JsonSyntaxError(error.reason, error.position, lineNumber, error.column) };
    }
    throw error;
  }
}

/**
 * Progress on stderr, only when stderr is a terminal (docs/cli.md "Output": piped output has no
 * progress). cli-progress is loaded only when a bar is drawn.
 */
import type { Factory } from './factory.js';

export interface Progress {
  /** sets the current value (bytes or items) and the extra fields shown */
  update(value: number, fields?: Record<string, string | number>): void;
  /** removes the bar */
  stop(): void;
}

const NONE: Progress = { update() {}, stop() {} };

/** Options of {@link startProgress}. */
export interface ProgressOptions {
  /** what is being done, e.g. `importing` */
  label: string;
  /** the end value (bytes of a file); undefined when unknown (stdin) */
  total: number | undefined;
  /** shown after the counts, e.g. `{records} records` */
  detail?: string;
  /** initial values of the detail's fields */
  fields?: Record<string, string | number>;
  /** draw only when this holds as well (e.g. stdout is not the same terminal) */
  when?: boolean;
  /** what the value counts: bytes (shown in KiB/MiB, the default) or items (shown as a number) */
  unit?: 'bytes' | 'items';
}

/** A progress bar on stderr, or a no-op when stderr is not a terminal. */
export async function startProgress(deps: Factory, options: ProgressOptions): Promise<Progress> {
  // --quiet asks for errors only, and --json for JSON only on stderr.
  if (!deps.io.stderr.isTTY || options.when === false || deps.globals.quiet === true || deps.globals.json === true) return NONE;
  const { SingleBar } = (await import('cli-progress')).default;
  const detail = options.detail ? ` | ${options.detail}` : '';
  const known = options.total !== undefined && options.total > 0;
  const bar = new SingleBar({
    stream: deps.io.stderr.raw,
    format: known ? `${options.label} [{bar}] {percentage}% | {size}${detail}` : `${options.label} {size}${detail}`,
    barCompleteChar: '█',
    barIncompleteChar: '░',
    hideCursor: true,
    clearOnComplete: true,
    fps: 10,
    noTTYOutput: false,
  });
  const size =
    options.unit === 'items'
      ? (items: number) => String(items)
      : (bytes: number) => (bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`);
  bar.start(known ? options.total! : 1, 0, { size: size(0), ...options.fields });
  return {
    update(value, fields) {
      bar.update(known ? Math.min(value, options.total!) : 0, { size: size(value), ...fields });
    },
    stop() {
      bar.stop();
    },
  };
}

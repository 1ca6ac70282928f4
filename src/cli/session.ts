/**
 * One run of a command (main.ts parses it with commander): Ctrl-C
 * and crash handlers, the race between the command and an interruption, the error rendered once
 * (failure.ts), then connections closed and output written out. It never calls `process.exit` on
 * the normal path (that truncates piped output).
 */
import { InterruptedError, PipeClosedError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { crash, reportFailure } from './failure.js';
import type { Factory } from './factory.js';
import type { IO } from './io.js';

/** How long a command that winds down by itself gets after Ctrl-C before the run ends anyway. */
const WIND_DOWN_MS = 20_000;

export interface Session {
  io: IO;
  factory: Factory;
  /** aborted on the first Ctrl-C (the factory's signal) */
  controller: AbortController;
  /** install SIGINT and crash handlers */
  processHandlers: boolean;
  /** runs the command */
  execute(): Promise<unknown>;
  /**
   * Turns an error into an exit code without rendering it (a parser's "help was shown"), or into
   * another error to render; undefined leaves it as it is.
   */
  translate?(error: unknown): number | { error: unknown } | undefined;
  /** what the run was asked for, read when it ends (the parser may learn it late) */
  json(): boolean;
  verbose(): boolean;
  /** the command writes (--on-error applies) */
  isWrite(): boolean;
  /** the command watches the signal and winds down by itself after Ctrl-C */
  windsDown(): boolean;
}

/** Runs the session's command and resolves to the exit code; never rejects. */
export async function runSession(session: Session): Promise<number> {
  const { io, factory, controller } = session;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    controller.signal.addEventListener('abort', () => {
      const grace = session.windsDown() ? WIND_DOWN_MS : 0;
      setTimeout(() => resolve('interrupted'), grace).unref();
    });
  });
  const onSigint = () => {
    // The second Ctrl-C does not wait for anything.
    if (controller.signal.aborted) process.exit(EXIT.INTERRUPTED);
    controller.abort(new InterruptedError());
  };
  const onCrash = (error: unknown) => crash(error, session.json());
  if (session.processHandlers) {
    process.on('SIGINT', onSigint);
    process.on('uncaughtException', onCrash);
    process.on('unhandledRejection', onCrash);
  }

  let code: number = EXIT.OK;
  try {
    const outcome = await Promise.race([session.execute(), interrupted]);
    if (outcome === 'interrupted') throw new InterruptedError();
  } catch (caught) {
    let error = caught;
    const translated = error instanceof PipeClosedError ? EXIT.OK : session.translate?.(error);
    if (typeof translated === 'number') code = translated;
    else {
      if (translated !== undefined) error = translated.error;
      code = await reportFailure(error, {
        factory,
        json: session.json(),
        verbose: session.verbose(),
        aborted: controller.signal.aborted,
        isWrite: session.isWrite(),
      });
    }
  } finally {
    await factory.close();
    try {
      await io.flush();
    } catch (error) {
      if (!(error instanceof PipeClosedError)) code = code === EXIT.OK ? EXIT.INTERNAL : code;
    }
    if (session.processHandlers) {
      process.off('SIGINT', onSigint);
      process.off('uncaughtException', onCrash);
      process.off('unhandledRejection', onCrash);
    }
  }
  return code;
}

/**
 * The dependencies of every command, as lazy getters (GitHub CLI's
 * `cmdutil.Factory`): nothing is read, parsed or connected until a command asks for it, so
 * `govctl signing-key generate` never reads a config file and `govctl --help` never opens a database.
 */
import type { ServiceApi, RequestTrace } from '../client/api.js';
import type { Transport } from '../client/transport.js';
import { ConfigError, UsageError } from './errors.js';
import type { IO } from './io.js';
import { displayPath, isFileSource, loadSettings, LOCAL_BASE_URL, SETTING_FLAG, SETTING_ENV, type SettingFlags, type Settings } from './settings.js';
import { displayUrl, serviceAddress, terminalText } from './terminal-text.js';
import { checkCredentialRoute, checkEnvironmentPairing, checkStoreChoice } from './trust.js';
import { checkServiceReplies } from './service-check.js';
import { localNoticeShown, rememberLocalNotice } from './local-notice.js';
import type { SigningKey } from '../core/signing/keys.js';

/** The root program's options (docs/cli.md), as commander parses them. */
export interface GlobalOptions extends SettingFlags {
  json?: boolean;
  /** false with `--no-color` */
  color?: boolean;
  verbose?: boolean;
  /** `-q/--quiet`: stderr holds warnings and the error only */
  quiet?: boolean;
}

/** Where the service is: a URL, or the embedded store (explicit or by default). */
export type Connection = { kind: 'remote'; baseUrl: string; apiKey: string } | { kind: 'local'; dataDir: string; explicit: boolean };

/** What commands get. Every member is lazy. */
export interface Factory {
  readonly io: IO;
  /** the root program's options (known once arguments are parsed) */
  readonly globals: GlobalOptions;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** the current time */
  readonly clock: () => Date;
  /** aborted on Ctrl-C: long commands stop taking new work */
  readonly signal: AbortSignal;
  /**
   * Where writes say they come from (the `X-Govctl-Source` header, stored as `source`): `cli` by
   * default; `evidence import` sets `import` and `govctl mcp` sets `agent` before they first ask
   * for the API.
   */
  requestSource: 'cli' | 'import' | 'agent';
  /**
   * The longest wait for a 429's `Retry-After` before the one retry, in ms (default: the client
   * library's 60 s). `govctl mcp` lowers it before it first asks for the API: its host gives up on a
   * call after about a minute, so a longer wait would end in the host's timeout, not a tool error.
   */
  rateLimitWaitMs?: number;
  /**
   * The signal of the work in progress, given to every request made without one of its own:
   * `govctl mcp` sets it so that a tool call the host cancels stops its request (the tools ask the
   * API without signals of their own).
   */
  currentSignal?: () => AbortSignal | undefined;
  /** the settings, loaded on first use (config files are searched then) */
  settings(): Promise<Settings>;
  /** the service API over HTTP or the embedded store, created on first use */
  api(): Promise<ServiceApi>;
  /** the workspace id: configured, or resolved with GET /api/me */
  workspaceId(): Promise<string>;
  /**
   * The workspace id for offline commands (sign, verify), which cannot ask the service.
   * @throws UsageError (64) when none is configured
   */
  offlineWorkspaceId(command: string): Promise<string>;
  /** the configured signing key, or undefined; a malformed one throws ConfigError (78) */
  signingKey(): Promise<SigningKey | undefined>;
  /** the signing key, required: ConfigError (78) when none is configured */
  requireSigningKey(why: string): Promise<SigningKey>;
  /** Takes stdin for one purpose; a second claim is a usage error (stdin can be read once). */
  claimStdin(purpose: string): NodeJS.ReadableStream;
  /**
   * Writes a notice to stderr, prefixed `govctl: ` (what happened, what was written, a summary): for
   * people, so not with `--quiet` or `--json` (docs/cli.md "Output").
   */
  note(line: string): Promise<void>;
  /** Writes a warning to stderr (`govctl: warning: …`; with `--json` `{"warning": …}`); `--quiet` keeps it. */
  warn(line: string): Promise<void>;
  /** Writes a `-v` trace line to stderr (with `--json` `{"trace": …}`). */
  trace(line: string): Promise<void>;
  /** Releases what was opened (connections, the embedded store). */
  close(): Promise<void>;
}

/** What {@link createFactory} needs. */
export interface FactoryOptions {
  io: IO;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** the parsed root options; read on first use */
  globals: () => GlobalOptions;
  signal: AbortSignal;
  clock?: () => Date;
  /** the client's wait before a retry (default: a timer) */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** settings already loaded (the fast path loads them to decide whether it applies) */
  settings?: Settings;
}

/** Whether `CI` is set: any value other than empty, `0` or `false`. */
export function isCI(env: NodeJS.ProcessEnv): boolean {
  const value = env.CI;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/** Reads a whole stream as UTF-8 text. */
export async function readAllText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer | string>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Decides where commands go (docs/cli.md "Settings", "The embedded store"):
 * - `--base-url local`: the embedded store, as asked (a project config may not ask for it while
 *   the user's own API key is set: trust.ts);
 * - a base URL: that service, which needs an API key, and the key may go there (trust.ts: a host
 *   that only a project config names gets none of the user's keys unless the user pinned it);
 * - an API key without a base URL: a configuration error (78);
 * - nothing, with `CI` set: a configuration error (78), because a gate must never silently read
 *   an empty local store;
 * - nothing: the embedded store in the data directory, with a notice.
 */
export function resolveConnection(settings: Settings, env: NodeJS.ProcessEnv): Connection {
  const baseUrl = settings.baseUrl?.trim();
  // Where the two came from, as trust.ts's checks take them (the key's named as a message names it).
  const baseUrlSource = { kind: settings.sources.baseUrl?.kind ?? 'default', name: settings.sources.baseUrl?.name ?? '' };
  const apiKeySource = { kind: settings.sources.apiKey?.kind ?? 'default', name: sourceName(settings, 'apiKey') };
  if (baseUrl === LOCAL_BASE_URL) {
    checkStoreChoice({ baseUrlSource, ...(settings.apiKey !== undefined && { apiKeySource }) });
    return { kind: 'local', dataDir: settings.dataDir, explicit: true };
  }
  if (baseUrl) {
    checkBaseUrl(baseUrl, settings);
    if (settings.apiKey === undefined) {
      throw new ConfigError(`an API key is required with the base URL from ${sourceName(settings, 'baseUrl')}`, {
        field: 'apiKey',
        hint: 'set SERVICE_API_KEY or give --api-key-file FILE (or --base-url local for the embedded store)',
      });
    }
    // The pairing rule reads the variables' own names.
    checkEnvironmentPairing({ baseUrlSource, apiKeySource: { kind: apiKeySource.kind, name: settings.sources.apiKey?.name ?? '' } });
    checkCredentialRoute({
      baseUrl,
      baseUrlSource,
      apiKeySource,
      trustedHosts: settings.trustedHosts,
      ...(settings.userBaseUrl !== undefined && { userBaseUrl: settings.userBaseUrl }),
    });
    return { kind: 'remote', baseUrl, apiKey: settings.apiKey };
  }
  if (settings.apiKey !== undefined) {
    // Name the base URL variable of the key's own family (environment.ts).
    const variable = settings.sources.apiKey?.name.startsWith('GOVCTL_') ? 'GOVCTL_BASE_URL' : 'SERVICE_BASE_URL';
    throw new ConfigError(`${variable} is required with an API key`, {
      field: 'baseUrl',
      hint: `set ${variable} or give --base-url URL (the API key came from ${sourceName(settings, 'apiKey')})`,
    });
  }
  if (isCI(env)) {
    throw new ConfigError('no service is configured and CI is set, so the empty local store is not used', {
      field: 'baseUrl',
      hint: 'set SERVICE_BASE_URL and SERVICE_API_KEY, or give --base-url local to use the local store on purpose',
    });
  }
  return { kind: 'local', dataDir: settings.dataDir, explicit: false };
}

/**
 * A base URL the transport can use, checked here so that the message shows it without its
 * userinfo or query (a library's message would quote it whole).
 */
function checkBaseUrl(baseUrl: string, settings: Settings): void {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ConfigError(`the base URL from ${sourceName(settings, 'baseUrl')} is not an http(s) URL`, {
      field: 'baseUrl',
      hint: 'give one like https://governance.example.com, or local for the embedded store',
    });
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(`the base URL from ${sourceName(settings, 'baseUrl')} (${displayUrl(baseUrl)}) holds a user name or password`, {
      field: 'baseUrl',
      hint: 'remove them from the URL; the API key goes in SERVICE_API_KEY or --api-key-file',
    });
  }
}

function sourceName(settings: Settings, name: 'baseUrl' | 'apiKey'): string {
  const source = settings.sources[name];
  if (!source) return SETTING_ENV[name] ?? SETTING_FLAG[name];
  return isFileSource(source.kind) ? displayPath(source.name) : source.name;
}

/**
 * One `-v` trace line; URLs never hold the key, the base URL's userinfo and query are hidden, and
 * the Authorization header is shown masked.
 */
export function formatTrace(trace: RequestTrace): string {
  const outcome = trace.status !== undefined ? String(trace.status) : `failed (${trace.error ?? 'no reply'})`;
  const retry = trace.attempt > 1 ? ` (attempt ${trace.attempt})` : '';
  return `${trace.method} ${terminalText(trace.url)} authorization: Bearer *** → ${outcome} in ${Math.round(trace.durationMs)} ms${retry}`;
}

/**
 * The proxy settings of the run's environment (lower case first, as undici reads them), given to the
 * transport explicitly so that it never falls back to the process's own environment ('' = none).
 */
function proxyFrom(env: NodeJS.ProcessEnv): { httpProxy: string; httpsProxy: string; noProxy: string } {
  return {
    httpProxy: env.http_proxy ?? env.HTTP_PROXY ?? '',
    httpsProxy: env.https_proxy ?? env.HTTPS_PROXY ?? '',
    noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
  };
}

/**
 * The transport of a run: adds the `X-Govctl-Source` header to every request, and gives a request
 * made without a signal the signal of the work in progress (Factory.currentSignal), if any.
 */
function runTransport(transport: Transport, source: () => string, current: () => AbortSignal | undefined): Transport {
  return {
    description: transport.description,
    request: (request, signal) => transport.request({ ...request, headers: { ...request.headers, 'x-govctl-source': source() } }, signal ?? current()),
    close: () => transport.close?.() ?? Promise.resolve(),
  };
}

/** Builds the factory of one run. */
export function createFactory(options: FactoryOptions): Factory {
  const { io, env, cwd, signal } = options;
  let settingsPromise: Promise<Settings> | undefined;
  let apiPromise: Promise<ServiceApi> | undefined;
  let stdinClaim: string | undefined;
  const closers: (() => Promise<void>)[] = [];

  const factory: Factory = {
    io,
    env,
    cwd,
    signal,
    clock: options.clock ?? (() => new Date()),
    requestSource: 'cli',
    get globals() {
      return options.globals();
    },
    note(line: string) {
      if (factory.globals.quiet === true || factory.globals.json === true) return Promise.resolve();
      // A notice may quote a service or a config file: no control characters. (Base URLs in
      // notices and traces are already shown without userinfo or query; a request's own query,
      // `?system=…`, stays visible in -v traces.)
      return io.stderr.write(`govctl: ${terminalText(line)}\n`);
    },
    warn(line: string) {
      const text = line.replace(/^warning: /, '');
      if (factory.globals.json === true) return io.stderr.write(`${JSON.stringify({ warning: text })}\n`);
      return io.stderr.write(`govctl: warning: ${terminalText(text)}\n`);
    },
    trace(line: string) {
      if (factory.globals.json === true) return io.stderr.write(`${JSON.stringify({ trace: line })}\n`);
      return io.stderr.write(`govctl: ${terminalText(line)}\n`);
    },
    claimStdin(purpose: string) {
      if (stdinClaim !== undefined && stdinClaim !== purpose) {
        throw new UsageError(`stdin cannot feed both ${stdinClaim} and ${purpose}`, { hint: 'give one of them as a file' });
      }
      stdinClaim = purpose;
      return io.stdin;
    },
    settings() {
      settingsPromise ??= (async () => {
        const settings =
          options.settings ??
          (await loadSettings({
            flags: factory.globals,
            env,
            cwd,
            readStdin: () => readAllText(factory.claimStdin('--api-key-file -')),
          }));
        for (const warning of settings.warnings) await factory.warn(warning);
        return settings;
      })();
      return settingsPromise;
    },
    api() {
      apiPromise ??= (async () => {
        const settings = await factory.settings();
        const connection = resolveConnection(settings, env);
        const verbose = factory.globals.verbose === true;
        const onRequest = verbose ? (trace: RequestTrace) => void factory.trace(formatTrace(trace)).catch(() => undefined) : undefined;
        const { createServiceApi } = await import('../client/api.js');
        const source = () => factory.requestSource;
        const current = () => factory.currentSignal?.();
        const sleep = options.sleep ? { sleep: options.sleep } : {};
        const retry = factory.rateLimitWaitMs !== undefined ? { retryPolicy: { maxWaitMs: factory.rateLimitWaitMs } } : {};
        // A wait of a second or more is said (a bulk command says it its own way): a silent pause
        // of up to a minute after a 429 reads as a hang.
        const onWait = (ms: number, why: 'rate_limited' | 'retry') => {
          if (ms >= 1000)
            void factory
              .note(`waiting ${Math.ceil(ms / 1000)} s (${why === 'rate_limited' ? 'rate limited' : 'retrying after a failed attempt'})`)
              .catch(() => undefined);
        };
        if (connection.kind === 'remote') {
          if (verbose)
            await factory.trace(
              `service ${displayUrl(connection.baseUrl)} (base URL from ${sourceName(settings, 'baseUrl')}, API key from ${sourceName(settings, 'apiKey')})`,
            );
          const proxy = proxyFrom(env);
          if (verbose) {
            // A proxy applies to 127.0.0.1 too unless NO_PROXY names it; an error then names the proxy's address.
            const set = [
              ['HTTP_PROXY', proxy.httpProxy],
              ['HTTPS_PROXY', proxy.httpsProxy],
            ].filter(([, value]) => value !== '');
            if (set.length > 0) {
              const named = set.map(([name, value]) => `${name}=${displayUrl(value)}`).join(', ');
              await factory.trace(
                `proxy: ${named}; requests go through it${proxy.noProxy ? ` unless NO_PROXY (${proxy.noProxy}) names the host` : ' (NO_PROXY is not set)'}`,
              );
            }
          }
          const { createHttpTransport } = await import('../client/transport.js');
          const http = createHttpTransport(connection.baseUrl, { proxy, ...(settings.timeout !== undefined && { timeoutMs: settings.timeout }) });
          const transport = runTransport(checkServiceReplies(http, connection.baseUrl), source, current);
          closers.push(() => transport.close!());
          // The client names the service in traces and errors as `baseUrl`: never with its userinfo or query.
          return createServiceApi({
            baseUrl: serviceAddress(connection.baseUrl),
            transport,
            apiKey: connection.apiKey,
            workspaceId: settings.workspaceId,
            onRequest,
            onWait,
            ...sleep,
            ...retry,
          });
        }
        const { openLocalStore } = await import('../server/index.js');
        const store = await openLocalStore(connection.dataDir).catch((error: unknown) => {
          // The store refuses a directory others could tamper with; that is the user's to fix (78).
          if (error instanceof Error && error.name === 'UnsafeDataDirError') {
            throw new ConfigError(`${error.message}; the local store is not used`, { field: 'dataDir', hint: (error as Error & { fix: string }).fix });
          }
          throw error;
        });
        closers.push(() => store.close());
        if (!connection.explicit) {
          // Once per data directory: the notice that a run will show is remembered there.
          if (factory.globals.quiet !== true && factory.globals.json !== true && !localNoticeShown(connection.dataDir)) {
            await factory.note(`using the local store in ${displayPath(connection.dataDir)} (no service configured; see \`govctl config init\`)`);
            rememberLocalNotice(connection.dataDir);
          }
        } else if (verbose) {
          await factory.trace(`using the local store in ${displayPath(connection.dataDir)}`);
        }
        return createServiceApi({
          transport: runTransport(store.transport, source, current),
          apiKey: store.apiKey,
          workspaceId: settings.workspaceId ?? store.workspaceId,
          onRequest,
          ...sleep,
          ...retry,
        });
      })();
      return apiPromise;
    },
    async workspaceId() {
      const settings = await factory.settings();
      if (settings.workspaceId) return settings.workspaceId;
      return (await factory.api()).resolveWorkspaceId();
    },
    async offlineWorkspaceId(command: string) {
      const settings = await factory.settings();
      if (settings.workspaceId) return settings.workspaceId;
      throw new UsageError(`${command} needs the workspace id: the signature covers it`, {
        field: '--workspace',
        hint: 'give --workspace WS or set SERVICE_WORKSPACE_ID (this command works offline and cannot look it up)',
      });
    },
    async signingKey() {
      return (await factory.settings()).signingKey();
    },
    async requireSigningKey(why: string) {
      const key = await factory.signingKey();
      if (!key) {
        throw new ConfigError(`no signing key is configured, and ${why} needs one`, {
          field: 'signingKey',
          hint: 'set SERVICE_SIGNING_KEY or give --signing-key-file FILE (make one with `govctl signing-key generate`)',
        });
      }
      return key;
    },
    async close() {
      // Newest first: the API before the store it runs on.
      for (const close of closers.reverse()) {
        try {
          await close();
        } catch {
          // Closing is best effort: the work is done and reported.
        }
      }
      closers.length = 0;
    },
  };
  return factory;
}

// The part of autocannon's interface the benchmarks use (bench/lib/load.mjs); the package ships no types.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Request {
    method?: 'GET' | 'POST';
    path?: string;
    body?: string | Buffer;
    /** called before each request; returns the request to send */
    setupRequest?: (request: Request) => Request;
    /** called with each answer */
    onResponse?: (status: number, body: string) => void;
  }

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** seconds */
    duration?: number;
    maxOverallRequests?: number;
    /** seconds */
    timeout?: number;
    headers?: Record<string, string>;
    requests?: Request[];
    excludeErrorStats?: boolean;
  }

  export interface Result {
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): this;
    stop(): void;
  }

  export default function autocannon(options: Options): Instance;
}

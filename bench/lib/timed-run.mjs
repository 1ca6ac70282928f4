// @ts-check
// Runs `node <bin> args…` to completion under /usr/bin/time: wall seconds, exit code, peak RSS
// (bytes, from the kernel's accounting of the process), stderr's tail, and stdout when asked for.
// The environment is only what is given (no SERVICE_* or GOVCTL_* setting leaks in), with the
// home and config directories in `dir`. Bounded: the process is killed after `timeoutMs`.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * @param {{ bin: string, args: string[], dir: string, env?: Record<string, string>, stdout?: 'ignore' | 'pipe' | number, timeoutMs: number }} o
 *   `stdout`: 'ignore', 'pipe' (returned as text), or a file descriptor (as `govctl … > file` would have it)
 * @returns {Promise<{ code: number | null, seconds: number, peakRss: number, stdout: string, stderr: string }>}
 */
export function timedRun({ bin, args, dir, env = {}, stdout = 'ignore', timeoutMs }) {
  return new Promise((resolvePromise, reject) => {
    const timeFile = join(dir, `time-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`);
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, process.execPath, bin, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), LANG: 'C.UTF-8', NO_COLOR: '1', ...env },
      stdio: ['ignore', stdout, 'pipe'],
    });
    let out = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (out += chunk));
    child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      let peakRss = NaN;
      try {
        peakRss = Number(readFileSync(timeFile, 'utf8').trim().split('\n').pop()) * 1024;
      } catch {
        // /usr/bin/time wrote nothing (the process could not start): no figure
      }
      resolvePromise({ code, seconds, peakRss, stdout: out, stderr });
    });
  });
}

// @ts-check
/**
 * Stops a throw-away PostgreSQL cluster whose owner has gone: `node postgres-watchdog.mjs OWNER
 * POSTMASTER`. Started detached by postgres-cluster.mjs beside each postmaster it starts, it checks
 * every half second; when the owning process (a test run, a benchmark) has ended without stopping
 * the server — killed, crashed, a timeout — it shuts the server down (SIGQUIT, then SIGKILL for
 * whatever is left after 5 s). It exits as soon as the postmaster has gone, whoever stopped it.
 */
import { alive } from './postgres-cluster.mjs';

const [owner, postmaster] = process.argv.slice(2).map(Number);
if (!Number.isSafeInteger(owner) || !Number.isSafeInteger(postmaster)) throw new Error('usage: postgres-watchdog.mjs OWNER_PID POSTMASTER_PID');

const timer = setInterval(() => {
  if (!alive(postmaster)) process.exit(0);
  if (alive(owner)) return;
  clearInterval(timer);
  try {
    process.kill(postmaster, 'SIGQUIT');
  } catch {
    // gone meanwhile
  }
  setTimeout(() => {
    if (alive(postmaster)) process.kill(postmaster, 'SIGKILL');
    process.exit(0);
  }, 5_000);
}, 500);

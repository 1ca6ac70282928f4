/**
 * Ports for tests. Servers in tests listen on port 0 and keep the port the system gave them (see
 * server.ts, fault-server.ts): a port is never found free, closed and then listened on again, which
 * races with every other process on the machine.
 *
 * The one exception is {@link closedPort}: a "nothing listens here" address for connection-refused
 * tests. It binds port 0 on 127.0.0.1 and closes it again; nothing of the test listens on it later.
 * Should another process take the port in between, the test sees a different failure (a reply or a
 * reset instead of a refusal) — loud, never a silent pass.
 */
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on (taken from the system and released again). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

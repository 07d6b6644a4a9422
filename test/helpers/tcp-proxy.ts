/**
 * A TCP proxy on loopback that a test can take down and bring back, to play a backend's outage
 * (Redis, an S3 store) in the middle of a test: `forward` passes bytes both ways; `refuse` drops every connection
 * and each new one at once; `stall` keeps connections open but holds what clients send until the
 * proxy forwards again (a backend that stopped answering, then caught up).
 */
import net, { type AddressInfo } from 'node:net';

export type ProxyMode = 'forward' | 'refuse' | 'stall';

export async function startTcpProxy(target: { host: string; port: number }) {
  let mode: ProxyMode = 'forward';
  const connections = new Set<{ client: net.Socket; backend: net.Socket; held: Buffer[] }>();
  const server = net.createServer((client) => {
    if (mode === 'refuse') {
      client.destroy();
      return;
    }
    const backend = net.connect(target.port, target.host);
    const connection = { client, backend, held: [] as Buffer[] };
    connections.add(connection);
    client.on('data', (chunk: Buffer) => (mode === 'forward' ? backend.write(chunk) : connection.held.push(chunk)));
    backend.pipe(client);
    for (const socket of [client, backend]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        connections.delete(connection);
        client.destroy();
        backend.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    setMode(next: ProxyMode) {
      mode = next;
      for (const connection of connections) {
        if (mode === 'refuse') connection.client.destroy();
        if (mode === 'forward') for (const chunk of connection.held.splice(0)) connection.backend.write(chunk);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client } of connections) client.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

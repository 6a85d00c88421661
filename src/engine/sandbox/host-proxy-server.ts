/**
 * The entry point of dist/host-proxy.js, a bundle of its own: the HTTP proxy that @anthropic-ai/sandbox-runtime ships
 * (a maintained proxy, CONNECT and plain HTTP, with its own host canonicalization), filtered to a task's allowed
 * host:port pairs. Only a supervisor whose task needs it loads this (host-proxy.ts); nothing else imports it.
 */
import type { Socket } from 'node:net';
import { createHttpProxyServer } from '@anthropic-ai/sandbox-runtime/dist/sandbox/http-proxy.js';
import { canonicalizeHost } from '@anthropic-ai/sandbox-runtime/dist/sandbox/parent-proxy.js';
import type { HostPort, HostProxy, HostProxyModule } from './host-proxy';

/** Listens on the UNIX socket `socket`; each CONNECT or proxied request goes out only to one of `allowed`. */
export const startHostProxy: HostProxyModule['startHostProxy'] = async (socket, allowed) => {
  const allow = allowSet(allowed);
  const server = createHttpProxyServer({
    // The proxy dials the canonical spelling (`LOCALHOST.` → `localhost`, `0x7f.1` → `127.0.0.1`): the filter
    // judges that same spelling, so what is allowed is what is reached. A host it cannot canonicalize is refused.
    filter: (port, host) => {
      const canonical = canonicalizeHost(host);
      return canonical !== undefined && allow.has(`${canonical}:${port}`);
    },
    // Fullwidth, percent-encoded and other Unicode spellings of a name are refused rather than mapped onto it.
    requireAsciiHost: true,
    // A plain-HTTP request must name in its Host header the host it is sent to.
    requireHostMatch: true,
  });
  const open = new Set<Socket>();
  server.on('connection', (client: Socket) => {
    open.add(client);
    client.on('close', () => open.delete(client));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Like the byte relays, the proxy must not keep the supervisor alive on its own.
  server.unref();
  const proxy: HostProxy = {
    close: () =>
      new Promise<void>((resolve) => {
        // A CONNECT tunnel is no longer the HTTP server's: destroying the accepted sockets ends tunnels too.
        for (const client of open) client.destroy();
        server.close(() => resolve());
      }),
  };
  return proxy;
};

function allowSet(allowed: HostPort[]): Set<string> {
  const set = new Set<string>();
  for (const { host, port } of allowed) {
    const canonical = canonicalizeHost(host);
    if (canonical !== undefined) set.add(`${canonical}:${port}`);
  }
  return set;
}

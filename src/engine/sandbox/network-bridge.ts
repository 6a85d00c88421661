import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { SpawnPlan } from '../../agents/types';
import { startHostProxy, type HostProxy } from './host-proxy';
import type { CutNetwork, LoopbackEndpoint } from './network';
import type { Mount } from './policy';

/**
 * The model endpoints carried into a task's empty network namespace (the RECIPE's bridge). Outside, in the
 * supervisor, one UNIX socket per endpoint relays each connection to the endpoint's host loopback port (a plain byte
 * relay, no parsing); inside, before the agent starts, socat listens on the same address and port and connects each
 * client to that socket. The agent reaches those ports and nothing else: every other address, loopback included,
 * refuses. The socket folder is shown to the agent read-only at its own path.
 *
 * When an endpoint is a host name, the filtering proxy (host-proxy.ts) listens on one more socket of that folder,
 * bridged in the same way at a free loopback port, and the agent's HTTP(S)_PROXY and ALL_PROXY name that port.
 * NO_PROXY is cleared: with it, clients go direct to a host that is not there, and hang (RECIPE, codex).
 */
export interface OpenBridge {
  mounts: Mount[];
  /** The agent's plan preceded by the inner listeners (a shell that starts them, waits until they listen, execs it). */
  wrapInside(plan: SpawnPlan): SpawnPlan;
  close(): Promise<void>;
}

/** An unreachable name server that answers at once: lookups inside fail in ~1 s, not 5 s per try (RECIPE: codex). */
const RESOLV_CONF = 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n';
/** How long the inner listeners may take to listen: 2000 polls of ~2 ms. */
const READY_POLLS = 2000;
/** The proxy's port inside the namespace (the usual proxy port), or the next one no bridged endpoint uses. */
const PROXY_PORT = 3128;
/** What a client may take as its proxy; each is set to the bridged proxy, or unset when there is none. */
const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'];
const NO_PROXY_VARIABLES = ['NO_PROXY', 'no_proxy'];

/** One listener inside: socat on host:port, connecting each client to a UNIX socket of the bridge folder. */
interface InnerListener extends LoopbackEndpoint {
  socket: string;
}

export async function openBridge(network: CutNetwork): Promise<OpenBridge> {
  // Under /tmp, short: a UNIX socket path has at most 107 bytes, and a task folder's path can be longer.
  const dir = await fs.mkdtemp('/tmp/caesar-net-');
  const resolv = path.join(dir, 'resolv.conf');
  await fs.writeFile(resolv, RESOLV_CONF, { mode: 0o444 });
  const relays: net.Server[] = [];
  const open = new Set<net.Socket>();
  let proxy: HostProxy | undefined;
  const close = async () => {
    for (const socket of open) socket.destroy();
    await Promise.all([...relays.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))), proxy?.close()]);
    await fs.rm(dir, { recursive: true, force: true });
  };
  const listeners: InnerListener[] = network.endpoints.map((e) => ({ ...e, socket: socketPath(dir, e) }));
  let proxyListener: InnerListener | undefined;
  try {
    for (const listener of listeners) relays.push(await relay(listener.socket, listener, open));
    if (network.proxied.length) {
      proxyListener = { host: '127.0.0.1', port: freePort(network.endpoints), socket: path.join(dir, 'proxy.sock') };
      proxy = await startHostProxy(proxyListener.socket, network.proxied);
    }
  } catch (err) {
    await close();
    throw err;
  }
  const mounts: Mount[] = [
    { kind: 'ro', path: dir },
    { kind: 'ro', path: '/etc/resolv.conf', source: resolv, optional: true },
  ];
  const inside = proxyListener ? [...listeners, proxyListener] : listeners;
  return { mounts, close, wrapInside: (plan) => (inside.length && network.socat ? innerListeners(plan, inside, network.socat, proxyListener) : plan) };
}

function socketPath(dir: string, endpoint: LoopbackEndpoint): string {
  return path.join(dir, `${endpoint.host}-${endpoint.port}.sock`);
}

function freePort(endpoints: LoopbackEndpoint[]): number {
  const taken = new Set(endpoints.filter((e) => e.host === '127.0.0.1').map((e) => e.port));
  let port = PROXY_PORT;
  while (taken.has(port)) port++;
  return port;
}

/** One UNIX socket relaying each connection to host:port on the host. */
function relay(socket: string, endpoint: LoopbackEndpoint, open: Set<net.Socket>): Promise<net.Server> {
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: endpoint.host, port: endpoint.port });
    for (const side of [client, upstream]) {
      open.add(side);
      side.on('close', () => open.delete(side));
      side.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => {
      server.off('error', reject);
      // The relay must not keep the supervisor alive on its own.
      server.unref();
      resolve(server);
    });
  });
}

/**
 * `sh -c SCRIPT caesar-net CMD ARGS…`: socat per listener in the background, a poll of the namespace's
 * /proc/net/tcp until each listens (no sleep when they already do), the proxy variables set (or an inherited proxy,
 * unreachable in here, unset), then `exec "$@"`, so the agent is the shell's own process and its arguments are never
 * re-parsed. The listeners die with the PID namespace.
 */
function innerListeners(plan: SpawnPlan, listeners: InnerListener[], socat: string, proxy: InnerListener | undefined): SpawnPlan {
  const starts = listeners.map((l) => `${quote(socat)} TCP-LISTEN:${l.port},bind=${l.host},fork,reuseaddr ${quote(`UNIX-CONNECT:${l.socket}`)} &`);
  const listening = listeners.map((l) => `grep -q ${quote(`${procNetAddress(l)} 00000000:0000 0A`)} /proc/net/tcp`).join(' && ');
  const proxyUrl = proxy ? `http://${proxy.host}:${proxy.port}` : undefined;
  const environment = [
    `unset ${NO_PROXY_VARIABLES.join(' ')}`,
    proxyUrl ? `export ${PROXY_VARIABLES.map((v) => `${v}=${quote(proxyUrl)}`).join(' ')}` : `unset ${PROXY_VARIABLES.join(' ')}`,
  ];
  const script = [
    ...starts,
    'i=0',
    `until ${listening}; do`,
    `  i=$((i+1)); if [ "$i" -gt ${READY_POLLS} ]; then echo 'caesar: the model-endpoint bridge did not start inside the sandbox' >&2; exit 125; fi`,
    '  sleep 0.002',
    'done',
    ...environment,
    'exec "$@"',
  ].join('\n');
  return { ...plan, command: '/bin/sh', args: ['-c', script, 'caesar-net', plan.command, ...plan.args] };
}

/** `127.0.0.1:8080` as /proc/net/tcp prints it: the address's bytes reversed in hex, then the port in hex. */
export function procNetAddress(endpoint: LoopbackEndpoint): string {
  const bytes = endpoint.host.split('.').map((b) => Number(b).toString(16).toUpperCase().padStart(2, '0'));
  return `${bytes.reverse().join('')}:${endpoint.port.toString(16).toUpperCase().padStart(4, '0')}`;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

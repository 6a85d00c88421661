import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { SpawnPlan } from '../../agents/types';
import type { LoopbackEndpoint } from './network';
import type { Mount } from './policy';

/**
 * The model endpoints carried into a task's empty network namespace (the RECIPE's bridge). Outside, in the
 * supervisor, one UNIX socket per endpoint relays each connection to the endpoint's host loopback port (a plain byte
 * relay, no parsing); inside, before the agent starts, socat listens on the same address and port and connects each
 * client to that socket. The agent reaches those ports and nothing else: every other address, loopback included,
 * refuses. The socket folder is shown to the agent read-only at its own path.
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

export async function openBridge(endpoints: LoopbackEndpoint[], socat: string | undefined): Promise<OpenBridge> {
  // Under /tmp, short: a UNIX socket path has at most 107 bytes, and a task folder's path can be longer.
  const dir = await fs.mkdtemp('/tmp/caesar-net-');
  const resolv = path.join(dir, 'resolv.conf');
  await fs.writeFile(resolv, RESOLV_CONF, { mode: 0o444 });
  const relays: net.Server[] = [];
  const open = new Set<net.Socket>();
  const close = async () => {
    for (const socket of open) socket.destroy();
    await Promise.all(relays.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    await fs.rm(dir, { recursive: true, force: true });
  };
  try {
    for (const endpoint of endpoints) relays.push(await relay(socketPath(dir, endpoint), endpoint, open));
  } catch (err) {
    await close();
    throw err;
  }
  const mounts: Mount[] = [
    { kind: 'ro', path: dir },
    { kind: 'ro', path: '/etc/resolv.conf', source: resolv, optional: true },
  ];
  return { mounts, close, wrapInside: (plan) => (endpoints.length && socat ? innerListeners(plan, dir, endpoints, socat) : plan) };
}

function socketPath(dir: string, endpoint: LoopbackEndpoint): string {
  return path.join(dir, `${endpoint.host}-${endpoint.port}.sock`);
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
 * `sh -c SCRIPT caesar-net CMD ARGS…`: socat per endpoint in the background, a poll of the namespace's
 * /proc/net/tcp until each listens (no sleep when they already do), then `exec "$@"`, so the agent is the shell's
 * own process and its arguments are never re-parsed. The listeners die with the PID namespace.
 */
function innerListeners(plan: SpawnPlan, dir: string, endpoints: LoopbackEndpoint[], socat: string): SpawnPlan {
  const starts = endpoints.map((e) => `${quote(socat)} TCP-LISTEN:${e.port},bind=${e.host},fork,reuseaddr ${quote(`UNIX-CONNECT:${socketPath(dir, e)}`)} &`);
  const listening = endpoints.map((e) => `grep -q ${quote(`${procNetAddress(e)} 00000000:0000 0A`)} /proc/net/tcp`).join(' && ');
  const script = [
    ...starts,
    'i=0',
    `until ${listening}; do`,
    `  i=$((i+1)); if [ "$i" -gt ${READY_POLLS} ]; then echo 'caesar: the model-endpoint bridge did not start inside the sandbox' >&2; exit 125; fi`,
    '  sleep 0.002',
    'done',
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

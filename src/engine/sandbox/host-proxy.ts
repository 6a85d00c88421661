import { locateDistFile } from '../../agents/dist-path';

/**
 * The filtering HTTP proxy of a task whose model endpoint is a host name (network.ts): the supervisor runs it outside
 * the sandbox, on a UNIX socket of the task's bridge folder, and network-bridge.ts bridges it into the empty
 * namespace. Its code (host-proxy-server.ts, @anthropic-ai/sandbox-runtime's proxy and what that pulls in, ~0.7 MB)
 * is a bundle of its own, dist/host-proxy.js, required only here, only when a task needs it: every other supervisor,
 * the CLI and the extension never load it.
 */
export interface HostPort {
  host: string;
  port: number;
}

export interface HostProxy {
  close(): Promise<void>;
}

/** What dist/host-proxy.js exports. */
export interface HostProxyModule {
  startHostProxy(socket: string, allowed: HostPort[]): Promise<HostProxy>;
}

/** $CAESAR_HOST_PROXY_JS overrides where the bundle is, in a test build (test-switches.ts). */
const OVERRIDE = 'hostProxyScript';
const BUNDLE = 'host-proxy.js';

/** The proxy bundle's path, or undefined with why when it cannot be found (a build without it). */
export function locateHostProxy(env: NodeJS.ProcessEnv = process.env): { file: string } | { missing: string } {
  try {
    return { file: locateDistFile(BUNDLE, OVERRIDE, env) };
  } catch (err) {
    return { missing: (err as Error).message };
  }
}

/** Loads the bundle (once per process: require caches it) and starts a proxy allowing exactly `allowed`. */
export async function startHostProxy(socket: string, allowed: HostPort[], env: NodeJS.ProcessEnv = process.env): Promise<HostProxy> {
  const located = locateHostProxy(env);
  if ('missing' in located) throw new Error(`The host-name proxy cannot start: ${located.missing}`);
  // A plain require of a file path: esbuild leaves it alone, so the proxy's code stays out of every other bundle.
  const loaded = require(located.file) as HostProxyModule;
  return loaded.startHostProxy(socket, allowed);
}

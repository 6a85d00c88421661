import type { Finding } from '../../protocol';
import { agentModelEndpoints } from './agent-endpoints';
import { locateHostProxy, type HostPort } from './host-proxy';
import { effectiveSandboxMode, type SandboxMode } from './mode';
import { findExecutable, sandboxPreflight } from './preflight';
import { testSwitchName } from '../../base/test-switches';

/**
 * `network: false` made a fact (issue 21, item 3): the agent gets a network namespace of its own, empty but for its
 * loopback, where each allowed model endpoint on the host's loopback is bridged in (network-bridge.ts). Only then
 * does task.json say `network: false`: the contract's false asserts the network is cut off.
 *
 * An endpoint given as an IPv4 loopback address is bridged as bytes, port to port. One given as a host name (a real
 * model API such as api.anthropic.com, or `localhost`) can only be filtered by name: the supervisor runs a filtering
 * HTTP proxy (host-proxy.ts) allowing exactly those host:port pairs, bridged in at a loopback port that the agent's
 * HTTPS_PROXY names. `localhost` is a name like any other here: the agent reaches it through the proxy, not as a
 * bridged port (a CLI that ignores HTTPS_PROXY needs its base URL as 127.0.0.1).
 */
export interface LoopbackEndpoint {
  /** An IPv4 loopback address (127.0.0.0/8): what the agent connects to inside, bridged to the same on the host. */
  host: string;
  port: number;
}

export interface NetworkDecisionInput {
  /** The delegation asked for the network closed (`off`, or a read-only task's `auto`): launch.json `network_cut`. */
  wanted: boolean;
  /** The user said `off` (not the read-only default): a network left open is then worth a finding. */
  requested: boolean;
  agentId: string;
  /** The supervisor's environment (the agent's comes from it): the adapters' base-URL variables. */
  env: NodeJS.ProcessEnv;
  allowHosts: string[];
  mode: SandboxMode | undefined;
  /** The adapter cannot run inside the sandbox at all (codex over ACP). */
  cannotBeSandboxed?: string;
}

/** What the sandbox needs to build a cut network (sandbox.ts, network-bridge.ts). */
export interface CutNetwork {
  /** Bridged port to port. */
  endpoints: LoopbackEndpoint[];
  /** When any endpoint is a host name: every endpoint, the only host:port pairs the filtering proxy lets through. */
  proxied: HostPort[];
  socat?: string;
}

export type NetworkDecision = ({ cut: true; findings: Finding[] } & CutNetwork) | { cut: false; findings: Finding[] };

export async function decideNetwork(input: NetworkDecisionInput): Promise<NetworkDecision> {
  if (!input.wanted) return { cut: false, findings: [] };
  const mode = effectiveSandboxMode(input.mode, input.env);
  // Not confined at all: the sandbox's own finding says so (or the task is refused); the network stays the adapter's.
  if (mode === 'off' || input.cannotBeSandboxed || !(await sandboxPreflight(input.env)).available) return { cut: false, findings: [] };
  const entries = [...agentModelEndpoints(input.agentId, input.env), ...input.allowHosts];
  const parsed = entries.map((entry) => ({ entry, endpoint: parseEndpoint(entry) }));
  const unparsable = parsed.filter((p) => !p.endpoint).map((p) => p.entry);
  if (unparsable.length) {
    return { cut: false, findings: input.requested ? [leftOpen(`${unparsable.join(', ')} is not a URL or host:port. Fix the entry, or request the network on`)] : [] };
  }
  const all = dedupe(parsed.map((p) => p.endpoint!));
  const endpoints = all.filter((e) => isLoopback(e.host));
  const named = all.filter((e) => !isLoopback(e.host));
  if (!all.length) return { cut: true, endpoints, proxied: [], findings: [] };
  // Inside its own network namespace the agent runs without privileges, so a bridge cannot listen below port 1024
  // there (measured: socat's bind is refused even with CAP_NET_BIND_SERVICE added): said now, not after a 17 s wait.
  const privileged = endpoints.filter((e) => e.port < 1024);
  if (privileged.length) {
    const why = `its model endpoint ${privileged.map(hostPort).join(', ')} is on a port below 1024, which the bridge cannot listen on inside the sandbox's own network. Fix: serve the endpoint on a port of 1024 or above, or name it \`localhost\`, which the filtering proxy reaches`;
    return { cut: false, findings: [{ ...leftOpen(why), severity: 'medium' }] };
  }
  const socat = locateSocat(input.env);
  if (!socat) {
    return { cut: false, findings: [{ ...leftOpen('socat, which bridges the model endpoint into the sandbox, is not installed. Fix: `sudo apt install socat`'), severity: 'medium' }] };
  }
  if (!named.length) return { cut: true, endpoints, proxied: [], socat, findings: [] };
  const proxy = locateHostProxy(input.env);
  if ('missing' in proxy) {
    return { cut: false, findings: [{ ...leftOpen(`its model endpoint ${named.map(hostPort).join(', ')} is a host name, and the proxy that filters by name is missing (${proxy.missing})`), severity: 'medium' }] };
  }
  // A CLI that honours HTTPS_PROXY sends its loopback endpoints through the proxy too (NO_PROXY is cleared): allowed.
  return { cut: true, endpoints, proxied: all, socat, findings: [] };
}

/** socat, which listens inside for each bridged endpoint: $CAESAR_SOCAT (empty: none), else PATH. */
export function locateSocat(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findExecutable('socat', env, testSwitchName('socat'));
}

function leftOpen(why: string): Finding {
  return { severity: 'info', title: 'Network not cut by the sandbox', detail: `The network was to be closed, but the agent keeps the host's network: ${why}.` };
}

/** `http://127.0.0.1:8080/v1`, `127.0.0.1:8080`, `api.example.com` → host and port (the scheme's default port). */
export function parseEndpoint(entry: string): { host: string; port: number } | undefined {
  const text = entry.trim();
  if (!text) return undefined;
  try {
    // A bare host:port is read with a scheme that has no default port: `127.0.0.1:80` keeps its 80 (as `http://…`,
    // the URL parser drops a port that is its scheme's default, and the bare form's default is 443).
    const bare = !text.includes('://');
    const url = new URL(bare ? `caesar-endpoint://${text}` : text);
    if (!bare && !['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return undefined;
    const port = url.port ? Number(url.port) : bare || url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return host && port > 0 && port < 65536 ? { host, port } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An IPv4 loopback address (127.0.0.0/8): what is bridged port to port. Everything else, `localhost` and IPv6 ::1
 * included, is a name for the proxy: what a name means is the host's resolver's to say, and the proxy asks it.
 */
export function isLoopback(host: string): boolean {
  return /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(host) && host.split('.').every((b) => Number(b) <= 255);
}

function hostPort(e: HostPort): string {
  return `${e.host}:${e.port}`;
}

function dedupe(endpoints: HostPort[]): HostPort[] {
  const seen = new Map<string, HostPort>();
  for (const e of endpoints) seen.set(hostPort({ host: e.host.toLowerCase(), port: e.port }), { host: e.host.toLowerCase(), port: e.port });
  return [...seen.values()];
}

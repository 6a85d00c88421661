import type { Finding } from '../../protocol';
import { agentModelEndpoints } from './agent-endpoints';
import { effectiveSandboxMode, type SandboxMode } from './mode';
import { findExecutable, sandboxPreflight } from './preflight';

/**
 * `network: false` made a fact (issue 21, item 3): the agent gets a network namespace of its own, empty but for its
 * loopback, where each allowed model endpoint on the host's loopback is bridged in (network-bridge.ts). Only then
 * does task.json say `network: false`: the contract's false asserts the network is cut off.
 *
 * Filtering by host name (a real model API such as api.anthropic.com) needs an HTTP/SOCKS proxy, which Caesar does
 * not ship yet: an agent whose endpoint is a host name keeps the host's network, and the findings say why.
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

export type NetworkDecision =
  | { cut: true; endpoints: LoopbackEndpoint[]; socat?: string; findings: Finding[] }
  | { cut: false; findings: Finding[] };

export async function decideNetwork(input: NetworkDecisionInput): Promise<NetworkDecision> {
  if (!input.wanted) return { cut: false, findings: [] };
  const mode = effectiveSandboxMode(input.mode, input.env);
  // Not confined at all: the sandbox's own finding says so (or the task is refused); the network stays the adapter's.
  if (mode === 'off' || input.cannotBeSandboxed || !(await sandboxPreflight(input.env)).available) return { cut: false, findings: [] };
  const entries = [...agentModelEndpoints(input.agentId, input.env), ...input.allowHosts];
  const parsed = entries.map((entry) => ({ entry, endpoint: parseEndpoint(entry) }));
  const unparsable = parsed.filter((p) => !p.endpoint).map((p) => p.entry);
  const named = parsed.filter((p) => p.endpoint && !isLoopback(p.endpoint.host)).map((p) => p.entry);
  if (unparsable.length || named.length) {
    const why = named.length
      ? `its model endpoint ${named.join(', ')} is a host name, and filtering by name needs a proxy Caesar does not ship yet`
      : `${unparsable.join(', ')} is not a URL or host:port`;
    return { cut: false, findings: input.requested ? [leftOpen(`${why}. Point the agent at a loopback base URL, or request the network on`)] : [] };
  }
  const endpoints = dedupe(parsed.map((p) => p.endpoint!).map((e) => ({ host: e.host === 'localhost' ? '127.0.0.1' : e.host, port: e.port })));
  if (!endpoints.length) return { cut: true, endpoints, findings: [] };
  const socat = locateSocat(input.env);
  if (!socat) {
    return { cut: false, findings: [{ ...leftOpen('socat, which bridges the model endpoint into the sandbox, is not installed. Fix: `sudo apt install socat`'), severity: 'medium' }] };
  }
  return { cut: true, endpoints, socat, findings: [] };
}

/** socat, which listens inside for each bridged endpoint: $CAESAR_SOCAT (empty: none), else PATH. */
export function locateSocat(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findExecutable('socat', env, 'CAESAR_SOCAT');
}

function leftOpen(why: string): Finding {
  return { severity: 'info', title: 'Network not cut by the sandbox', detail: `The network was to be closed, but the agent keeps the host's network: ${why}.` };
}

/** `http://127.0.0.1:8080/v1`, `127.0.0.1:8080`, `api.example.com` → host and port (the scheme's default port). */
export function parseEndpoint(entry: string): { host: string; port: number } | undefined {
  const text = entry.trim();
  if (!text) return undefined;
  try {
    const url = new URL(text.includes('://') ? text : `http://${text}`);
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return undefined;
    const port = url.port ? Number(url.port) : url.protocol === 'https:' || url.protocol === 'wss:' || !text.includes('://') ? 443 : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return host && port > 0 && port < 65536 ? { host, port } : undefined;
  } catch {
    return undefined;
  }
}

/** IPv4 loopback (127.0.0.0/8) and `localhost`: what can be bridged. IPv6 ::1 is not bridged (a host name, for now). */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(host);
}

function dedupe(endpoints: LoopbackEndpoint[]): LoopbackEndpoint[] {
  const seen = new Map<string, LoopbackEndpoint>();
  for (const e of endpoints) seen.set(`${e.host}:${e.port}`, e);
  return [...seen.values()];
}

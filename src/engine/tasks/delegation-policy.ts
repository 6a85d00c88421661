import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { ENV } from '../../protocol';
import { DelegationRefusedError, type LaunchDraft } from '../resolve/resolve';
import type { DelegatingParent } from '../run/delegating-parent';
import { decideNetwork } from '../sandbox/network';
import type { DelegateFields } from '../store/delegation-socket';

/*
 * What a sandboxed task's agent may start through its supervisor (delegation-server.ts), decided from the parent's own
 * launch, never from the request: the repository and workspace are the parent's, the depth and parent id follow from
 * it, and the child's sandbox, network, environment and place of writing are never looser than the parent's.
 */

/**
 * The root and workspace the caller resolved must be the parent's (its checkout or its worktree): a request naming
 * another repository, or a folder outside the parent's, is refused. The child's workspace is the parent's, whatever
 * folder inside it the caller named.
 */
export function checkClaimedPlaces(parent: DelegatingParent, claimed: { root: string; workspace: string }): void {
  const roots = [parent.root, parent.worktree].filter((p): p is string => !!p).map(real);
  if (!roots.includes(real(claimed.root))) {
    throw new DelegationRefusedError('usage', `Refused: a task's agent delegates only within its own repository (${parent.root}); the request named ${JSON.stringify(claimed.root)}.`);
  }
  const places = [parent.launch.workspace, parent.worktree].filter((p): p is string => !!p).map(real);
  const workspace = real(claimed.workspace);
  if (!places.some((place) => isWithin(workspace, place))) {
    throw new DelegationRefusedError('usage', `Refused: the workspace ${JSON.stringify(claimed.workspace)} is outside this task's workspace (${parent.launch.workspace}); a sub-task works where its parent does.`);
  }
}

/** The request with what cannot be asked from inside a cut network refused, and the parent's tighter settings imposed. */
export function tightenRequest(parent: DelegatingParent, request: DelegateFields): DelegateFields {
  if (parent.networkCut && request.network === 'on') {
    throw new DelegationRefusedError('network', "Refused: this task's network is cut, so a sub-task's network cannot be on (it would be a way out). Ask for network off or auto.");
  }
  if (parent.networkCut && request.checks?.length) {
    throw new DelegationRefusedError('usage', "Refused: this task's network is cut, and a check runs on the host's network (it would be a way out). Configure the checks as [[check]] instead.");
  }
  return {
    ...request,
    ...(parent.networkCut ? { network: 'off' as const } : {}),
    ...(parent.launch.env_policy === 'minimal' ? { env: 'minimal' as const } : {}),
  };
}

/**
 * The resolved launch made no looser than the parent's: confined (`required`: it fails rather than run unconfined),
 * hiding at least what the parent's sandbox hides and opening at most what it opens, the network cut when the parent's
 * is (refused when the child's agent could not be cut off), the environment `minimal` when the parent's is, and
 * writing in a worktree unless the parent itself writes in place.
 */
export async function tightenLaunch(parent: DelegatingParent, launch: LaunchDraft): Promise<LaunchDraft> {
  const mine = parent.launch.sandbox;
  const sandbox = {
    mode: 'required' as const,
    hide: [...new Set([...(mine?.hide ?? []), ...(launch.sandbox?.hide ?? [])])],
    read_write: (launch.sandbox?.read_write ?? []).filter((p) => mine?.read_write.includes(p)),
    allow_hosts: (launch.sandbox?.allow_hosts ?? []).filter((h) => mine?.allow_hosts.includes(h)),
  };
  const tightened: LaunchDraft = {
    ...launch,
    sandbox,
    env_policy: parent.launch.env_policy === 'minimal' ? 'minimal' : launch.env_policy,
    env_allow: parent.launch.env_policy === 'minimal' ? launch.env_allow.filter((name) => parent.launch.env_allow.includes(name)) : launch.env_allow,
    network_cut: launch.network_cut || parent.networkCut,
    ...placeOfWriting(parent, launch),
  };
  if (parent.networkCut) await requireNetworkCut(tightened);
  return tightened;
}

function placeOfWriting(parent: DelegatingParent, launch: LaunchDraft): Pick<LaunchDraft, 'isolation' | 'allow_inplace_write'> {
  if (parent.writesInPlace || launch.mode !== 'write') return { isolation: launch.isolation, allow_inplace_write: launch.allow_inplace_write && parent.writesInPlace };
  if (launch.isolation === 'inplace') {
    throw new DelegationRefusedError('inplace-write', "Refused: this task does not write your checkout in place, so neither may a sub-task it starts. Ask for isolation worktree.");
  }
  return { isolation: 'worktree', allow_inplace_write: false };
}

/** The child's supervisor decides the cut again as it starts; a cut it could not make is refused here, before any task exists. */
async function requireNetworkCut(launch: LaunchDraft): Promise<void> {
  const decision = await decideNetwork({
    wanted: true,
    requested: true,
    agentId: launch.agent,
    env: process.env,
    allowHosts: launch.sandbox?.allow_hosts ?? [],
    mode: 'required',
  });
  if (decision.cut) return;
  const why = decision.findings.map((f) => f.detail).join(' ') || 'the sandbox cannot cut it here';
  throw new DelegationRefusedError('network', `Refused: this task's network is cut, and the sub-task's could not be: ${why}`);
}

/** The environment a delegation from this parent is resolved with: the supervisor's, with the parent's depth, id and agent. */
export function parentEnv(parent: DelegatingParent): NodeJS.ProcessEnv {
  return { ...process.env, [ENV.depth]: String(parent.launch.depth), [ENV.taskId]: parent.id, [ENV.agent]: parent.launch.agent };
}

function real(p: string): string {
  const absolute = path.resolve(p);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

function isWithin(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

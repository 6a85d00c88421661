import type { Command } from 'commander';
import { DEFAULT_TRANSPORT, describePrograms, trustCommand, type LoadedConfig } from '../../config';
import { agentStatuses, locateSocat, offReason, sandboxModeDecision, sandboxPreflight, slurmHealth, type AgentCatalogue, type SlurmHealth } from '../../engine/tasks';
import { printJson, type CliIo } from '../io';
import { hasAcpProbe, probeAcp, type AcpSupport } from './doctor-acp';
import {
  type CommonOptions,
  contextOf,
  load,
  catalogueOf,
  configAction,
  withCommon,
} from './config-common';

/**
 * `caesar doctor`: each agent installed or not, its version, capabilities in words, the policy's verdict, and for the
 * agents with an ACP entry point whether the installed version can be driven over ACP and which transport is set.
 */
export function registerDoctor(program: Command, io: CliIo): void {
  withCommon(program.command('doctor'), false)
    .description('Check each agent: installed or not, version, capabilities, allowed by the policy or why not')
    .action(
      configAction(async (opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const catalogue = catalogueOf(loaded, ctx);
        // The ACP probes run alongside the version probes: both start slow CLIs, and doctor waits for the slowest.
        const acp = new Map(catalogue.ids().map((id) => [id, acpStatus(id, loaded, catalogue, ctx.env)]));
        const sandboxing = sandboxStatus(loaded, ctx.env);
        const statuses = await agentStatuses(loaded, catalogue, { withVersion: true });
        const agents = await Promise.all(statuses.map(async (status) => ({ ...status, ...(await acp.get(status.id)) })));
        const missing = agents.filter((a) => !a.installed).map((a) => a.id);
        const denied = agents.filter((a) => a.refusal).map((a) => ({ id: a.id, ...a.refusal! }));
        const layers = loaded.layers.map((l) => ({ scope: l.scope, file: l.file }));
        // An untrusted repository file was loaded without its programs: nothing below ran anything it names.
        const untrusted = loaded.untrusted.map((u) => ({ scope: u.scope, file: u.file, sha256: u.sha256, would_allow: describePrograms(u.programs) }));
        const policyNotes = loaded.notes.map((n) => n.message);
        const launcher = await launcherStatus(loaded);
        const sandbox = await sandboxing;
        if (ctx.json) {
          printJson(ctx.io, { root: ctx.root, layers, sandbox, agents, missing, denied, untrusted, policy_notes: policyNotes, ignored: loaded.ignored, launcher });
          return;
        }
        ctx.io.out(`caesar root: ${ctx.root}`);
        ctx.io.out(`config files: ${layers.length ? layers.map((l) => `${l.file} (${l.scope})`).join(', ') : 'none (built-in defaults)'}`);
        if (untrusted.length) {
          ctx.io.out('\nNot trusted, so not used (nothing it names was run):');
          for (const u of untrusted) {
            ctx.io.out(`  ${u.file} (sha256 ${u.sha256}) would allow:`);
            for (const line of u.would_allow) ctx.io.out(`    - ${line}`);
          }
          ctx.io.out(`  To trust it after reading it: ${trustCommand(ctx.root)}\n`);
        }
        if (policyNotes.length) {
          ctx.io.out('The repository asks to loosen your policy (ignored: it can only tighten):');
          for (const note of policyNotes) ctx.io.out(`  - ${note}`);
        }
        ctx.io.out(`launcher: ${launcherInWords(launcher)}`);
        for (const line of sandboxInWords(sandbox)) ctx.io.out(line);
        for (const agent of agents) {
          const state = agent.installed ? `found${agent.version ? `, ${agent.version}` : ''}` : 'not found';
          const policy = agent.refusal ? `refused: ${agent.refusal.reason}` : 'allowed';
          ctx.io.out(`${agent.installed ? '✓' : '✗'} ${agent.id.padEnd(12)} ${agent.display_name} — ${state} — ${policy}`);
          ctx.io.out(`    ${capabilitiesInWords(agent.capabilities)}`);
          if (agent.acp) ctx.io.out(`    ${acpInWords(agent.acp)}`);
        }
        if (missing.length) {
          ctx.io.out(`\nTo install: ${missing.join(', ')} (each is looked up on PATH).`);
          for (const agent of agents) if (agent.install_hint) ctx.io.out(`  ${agent.id.padEnd(12)} ${agent.install_hint}`);
        }
        if (denied.length) {
          ctx.io.out('\nRefused by the policy:');
          for (const d of denied) ctx.io.out(`  ${d.id}: ${d.reason}\n    remedy: ${d.remedy}`);
        }
      }),
    );
}

/**
 * Where tasks' supervisors run (`[launcher]`), and for Slurm whether sbatch is there and the controller answers. The
 * Slurm commands are asked even with the local launcher when they are installed: a role or a delegation may pick it.
 */
async function launcherStatus(loaded: LoadedConfig): Promise<{ kind: string; slurm?: SlurmHealth }> {
  const kind = loaded.config.launcher.kind;
  const slurm = await slurmHealth();
  const installed = typeof slurm.sbatch === 'string' || !('missing' in slurm.sbatch);
  return { kind, ...(kind === 'slurm' || installed ? { slurm } : {}) };
}

function launcherInWords(status: { kind: string; slurm?: SlurmHealth }): string {
  const where = status.kind === 'slurm' ? 'slurm (each task\'s supervisor is a batch job)' : 'local (a detached process on this machine)';
  const slurm = status.slurm;
  if (!slurm) return where;
  const sbatch = typeof slurm.sbatch === 'string' ? slurm.sbatch : 'missing' in slurm.sbatch ? 'sbatch not found on PATH (apt-get install slurm-client, or your site\'s module)' : `sbatch failed: ${slurm.sbatch.error}`;
  const controller = slurm.controller === 'answers' ? 'the controller answers' : `the controller does not answer: ${slurm.controller.error}`;
  return `${where}; Slurm: ${sbatch}, ${controller}`;
}

interface SandboxStatus {
  mode: string;
  available: boolean;
  bwrap?: string;
  /** What bridges a cut network's model endpoint in; absent: such a task keeps the host's network. */
  socat?: string;
  cause?: string;
  fix?: string;
  /** With the mode off: who said so (the configuration, or an inherited $CAESAR_SANDBOX). */
  offReason?: string;
}

/** The sandbox as a task started now would get it (src/engine/sandbox/): the mode in force and the preflight's verdict. */
async function sandboxStatus(loaded: LoadedConfig, env: NodeJS.ProcessEnv): Promise<SandboxStatus> {
  const decision = sandboxModeDecision(loaded.config.sandbox.mode, env);
  const mode = decision.mode;
  const verdict = await sandboxPreflight(env);
  const socat = locateSocat(env);
  const off = mode === 'off' ? { offReason: offReason(decision) } : {};
  return verdict.available ? { mode, ...off, available: true, bwrap: verdict.bwrap, ...(socat ? { socat } : {}) } : { mode, ...off, available: false, cause: verdict.cause, fix: verdict.fix };
}

function sandboxInWords(sandbox: SandboxStatus): string[] {
  if (sandbox.mode === 'off') return [`✗ sandbox: off (${sandbox.offReason ?? '[sandbox] mode = "off"'}): agents run unconfined`];
  if (sandbox.available) return [`✓ sandbox: agents run confined by ${sandbox.bwrap} (mode ${sandbox.mode})`, networkInWords(sandbox.socat)];
  const consequence = sandbox.mode === 'required' ? 'tasks are refused (mode required)' : 'tasks run unconfined, each with a high finding (mode auto)';
  return [`✗ sandbox: not available: ${sandbox.cause}; ${consequence}`, `    fix: ${sandbox.fix}`];
}

function networkInWords(socat: string | undefined): string {
  if (socat) return `✓ network: a task with the network cut (read-only, or network off) reaches only its model endpoint, bridged by ${socat}`;
  return '✗ network: socat is not installed: a task with the network cut keeps the host\'s network when its model endpoint is on loopback\n    fix: `sudo apt install socat`';
}

/** What each capability means for the user, in words (`doctor --json` keeps the flags). */
const CAPABILITY_WORDS: Array<{ key: string; has: string; lacks: string }> = [
  { key: 'nativeReadOnly', has: 'can confine itself to reading', lacks: 'has no read-only mode (read-only tasks run in a worktree)' },
  { key: 'schemaTier', has: 'returns its report as structured output', lacks: 'writes its report to a file' },
  { key: 'model', has: 'takes a model name', lacks: 'cannot be given a model' },
  { key: 'reportsUsage', has: 'reports tokens and cost', lacks: 'does not report tokens or cost' },
  { key: 'channel', has: 'can report back over the MCP channel', lacks: '' },
];

const NETWORK_WORDS: Record<string, string> = {
  open: 'network always on (caesar cannot cut it)',
  controllable: 'network switched on or off per task',
  'write-only': 'network only in write tasks',
  unknown: 'network unknown (its [[agent]] entry declares no network_args)',
};

function capabilitiesInWords(caps: unknown): string {
  if (!caps || typeof caps !== 'object') return 'capabilities unknown';
  const c = caps as Record<string, unknown>;
  const words = CAPABILITY_WORDS.map((w) => (c[w.key] === true ? w.has : w.lacks)).filter(Boolean);
  return [...words, NETWORK_WORDS[String(c.network)] ?? `network ${String(c.network)}`].join('; ');
}

interface AcpStatus extends Partial<AcpSupport> {
  /** The transport tasks of this agent use today (`[transport]`, default "stream"). */
  transport: string;
  /** caesar has an ACP command line for this agent (its adapter declares one). */
  caesar_speaks_acp: boolean;
}

/** `acp` for the agents it concerns: those caesar can drive over ACP, those with a probe, and any set to acp. */
async function acpStatus(id: string, loaded: LoadedConfig, catalogue: AgentCatalogue, env: NodeJS.ProcessEnv): Promise<{ acp?: AcpStatus }> {
  const transport = loaded.config.transports[id] ?? DEFAULT_TRANSPORT;
  const speaks = catalogue.speaksAcp?.(id) ?? false;
  if (!speaks && !hasAcpProbe(id) && transport === DEFAULT_TRANSPORT) return {};
  let support: AcpSupport | undefined;
  if (!hasAcpProbe(id)) {
    // An agent caesar drives over ACP with no probe of its own (the built-in demo agent) has nothing apart to check.
    if (speaks) support = { supported: true, detail: 'built in' };
  } else {
    const location = await catalogue.location?.(id);
    if (location) support = await probeAcp(id, location, env);
  }
  return { acp: { transport, caesar_speaks_acp: speaks, ...(support ?? {}) } };
}

function acpInWords(acp: AcpStatus): string {
  const version =
    acp.supported === undefined
      ? 'not checked (not installed)'
      : acp.supported === null
        ? `could not tell: ${acp.detail}`
        : acp.supported
          ? `this version speaks it (${acp.detail})`
          : `not available: ${acp.detail}${acp.install ? `; install: ${acp.install}` : ''}`;
  const caesar = acp.caesar_speaks_acp ? '' : '; caesar has no ACP command line for it yet';
  return `ACP: ${version}${caesar}; transport ${acp.transport}`;
}

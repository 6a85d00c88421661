import { execFile } from 'node:child_process';
import { VERSION_TIMEOUT_MS, findProgram } from '../../engine/tasks';

/**
 * `caesar doctor`'s ACP column: whether the INSTALLED version of an agent can be driven over the Agent Client
 * Protocol. gemini, copilot and opencode speak it themselves (their help names the entry point); claude and codex
 * need an adapter program on PATH (codex's also needs `bwrap` for its sandbox). Cheap checks only: one `--help` with
 * a short timeout, or a PATH lookup. What each entry point looked like on the versions our live tests ran is in
 * docs/agents.md.
 */

export interface AcpSupport {
  /** The installed version can be driven over ACP (the adapter or tool it needs is there too); null: could not tell. */
  supported: boolean | null;
  /** How: `gemini --acp`, `claude-agent-acp on PATH`…, or why not. */
  detail: string;
  /** What to install when something is missing. */
  install?: string;
}

type Probe =
  /** The agent's own CLI: its `--help` output must name the ACP entry point. */
  | { kind: 'help'; entry: string; mentions: RegExp }
  /** A separate adapter program, plus programs it cannot work without. */
  | { kind: 'adapter'; program: string; install: string; needs?: Array<{ program: string; why: string; install: string }> };

const PROBES: Record<string, Probe> = {
  gemini: { kind: 'help', entry: 'gemini --acp', mentions: /--acp\b/ },
  copilot: { kind: 'help', entry: 'copilot --acp --stdio', mentions: /--acp\b/ },
  opencode: { kind: 'help', entry: 'opencode acp', mentions: /^\s*opencode acp\b/m },
  claude: { kind: 'adapter', program: 'claude-agent-acp', install: 'npm install -g @zed-industries/claude-agent-acp@0.23.1' },
  codex: {
    kind: 'adapter',
    program: 'codex-acp',
    install: 'npm install -g @zed-industries/codex-acp@0.16.0',
    needs: [{ program: 'bwrap', why: 'its sandbox runs every command under bubblewrap', install: 'apt install bubblewrap (Debian/Ubuntu)' }],
  },
};

/** As long as a version probe: gemini needs 3 s of CPU for its help, 10 s and more on a busy machine. */
export const ACP_PROBE_TIMEOUT_MS = VERSION_TIMEOUT_MS;

/** Whether caesar knows how to check `id` at all (the built-in agents that have an ACP entry point). */
export function hasAcpProbe(id: string): boolean {
  return PROBES[id] !== undefined;
}

/** Checks one installed agent; `location` is the program doctor found for it. Never throws. */
export async function probeAcp(id: string, location: string, env: NodeJS.ProcessEnv): Promise<AcpSupport | undefined> {
  const probe = PROBES[id];
  if (!probe) return undefined;
  if (probe.kind === 'help') {
    const help = await outputOf(location, ['--help'], env);
    if (help !== undefined && probe.mentions.test(help)) return { supported: true, detail: probe.entry };
    if (help === undefined) return { supported: null, detail: `its --help gave no answer within ${ACP_PROBE_TIMEOUT_MS / 1000} s` };
    return { supported: false, detail: `this version's --help does not mention ${probe.entry}` };
  }
  const adapter = await findProgram(probe.program, env);
  if (!adapter) return { supported: false, detail: `its ACP adapter ${probe.program} is not on PATH`, install: probe.install };
  for (const need of probe.needs ?? []) {
    if (!(await findProgram(need.program, env))) return { supported: false, detail: `${probe.program} found, but ${need.program} is not on PATH (${need.why})`, install: need.install };
  }
  return { supported: true, detail: `through ${adapter}` };
}

/** stdout and stderr together (some CLIs print help on stderr); undefined when it printed nothing in time. */
function outputOf(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: ACP_PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', env, windowsHide: true, maxBuffer: 1024 * 1024 }, (_err, stdout, stderr) => {
      const text = `${stdout}\n${stderr}`;
      resolve(text.trim() === '' ? undefined : text);
    });
  });
}

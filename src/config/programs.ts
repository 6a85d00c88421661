import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Layer } from './schema';

/*
 * What a repository's config layer would make caesar run or read from outside the repository: the part that needs
 * the user's trust. Computed from the layer's own data (not the merge), so `caesar trust` shows exactly what the
 * file it records allows.
 */

export interface LayerPrograms {
  /** `[[agent]]` entries: each a program with its arguments (a built-in id here replaces the built-in program). */
  agents: Array<{ id: string; bin: string; args: string[] }>;
  /** `[worktree] setup`: shell commands run in every new worktree. */
  setup: string[];
  /** `[worktree] copy/link` entries whose source, followed through links, lies outside the repository. */
  outside: Array<{ kind: 'copy' | 'link'; path: string; resolves_to: string }>;
  /** `[[check]]` entries and roles' `checks`: shell commands Caesar runs after each agent. */
  checks: Array<{ name: string; command: string }>;
  /** Role prompt files outside `.caesar/`: read and sent to the agent. */
  promptFiles: Array<{ role: string; file: string }>;
}

export function namesPrograms(programs: LayerPrograms): boolean {
  return programs.agents.length + programs.setup.length + programs.checks.length + programs.outside.length + programs.promptFiles.length > 0;
}

const CAESAR_DIR = '.caesar';

export async function programsOf(data: Layer, root: string | undefined): Promise<LayerPrograms> {
  const outside: LayerPrograms['outside'] = [];
  if (root) {
    for (const kind of ['copy', 'link'] as const) {
      for (const entry of data.worktree?.[kind] ?? []) {
        const resolved = await resolvesOutside(root, entry);
        if (resolved) outside.push({ kind, path: entry, resolves_to: resolved });
      }
    }
  }
  return {
    agents: (data.agent ?? []).map((a) => ({ id: a.id, bin: a.bin, args: [...a.args] })),
    setup: [...(data.worktree?.setup ?? [])],
    outside,
    checks: [
      ...(data.check ?? []).map((check) => ({ name: check.name, command: check.command })),
      ...(data.role ?? []).flatMap((role) => (role.checks ?? []).map((command) => ({ name: `role "${role.name}"`, command }))),
    ],
    promptFiles: (data.role ?? [])
      .filter((role) => role.system_prompt_file && !(root && promptFileInsideCaesar(root, role.system_prompt_file)))
      .map((role) => ({ role: role.name, file: role.system_prompt_file! })),
  };
}

export function rolePromptPath(root: string, file: string): string {
  return path.resolve(root, CAESAR_DIR, file);
}

export function promptFileInsideCaesar(root: string, file: string): boolean {
  const relative = path.relative(path.resolve(root, CAESAR_DIR), rolePromptPath(root, file));
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/**
 * The real path of `root/entry` (or of its deepest existing ancestor) when it leaves the root, e.g. through a
 * committed symlink `keys -> ~/.ssh`; undefined when it stays inside. The schema already refuses `..` and absolute
 * entries, so only links can lead out.
 */
async function resolvesOutside(root: string, entry: string): Promise<string | undefined> {
  const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
  let probe = path.resolve(root, entry);
  let rest = '';
  for (;;) {
    const real = await fs.realpath(probe).catch(() => undefined);
    if (real !== undefined) {
      const full = rest ? path.join(real, rest) : real;
      const relative = path.relative(realRoot, full);
      return relative.startsWith('..') || path.isAbsolute(relative) ? full : undefined;
    }
    const parent = path.dirname(probe);
    if (parent === probe) return undefined;
    rest = rest ? path.join(path.basename(probe), rest) : path.basename(probe);
    probe = parent;
  }
}

/** One line per thing the layer would allow, for `caesar trust`, doctor and refusals. */
export function describePrograms(programs: LayerPrograms): string[] {
  const lines: string[] = [];
  for (const agent of programs.agents) lines.push(`agent "${agent.id}" runs ${JSON.stringify(agent.bin)} ${agent.args.map((a) => JSON.stringify(a)).join(' ')}`.trimEnd());
  for (const command of programs.setup) lines.push(`[worktree] setup runs in a shell: ${JSON.stringify(command)}`);
  for (const check of programs.checks) lines.push(`check ${check.name} runs in a shell: ${JSON.stringify(check.command)}`);
  for (const o of programs.outside) lines.push(`[worktree] ${o.kind} "${o.path}" brings in ${o.resolves_to}, outside the repository`);
  for (const p of programs.promptFiles) lines.push(`role "${p.role}" reads its prompt from ${p.file}, outside .caesar/`);
  return lines;
}

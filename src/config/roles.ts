import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RoleConfig } from './schema';

/**
 * The roles every project has until a layer redefines them. The fallback order starts with the reference's agents
 * (codex, antigravity, opencode) and continues with the rest of our catalogue, so a machine with only Claude Code,
 * Gemini CLI or Copilot still gets a pick. `claude` stays last-ish because, without allow_recursion, the policy skips
 * it inside a claude task. Isolation/network/timeout left unset inherit [policy], so changing the policy default
 * reaches the roles too.
 */
export const DEFAULT_ROLES: readonly RoleConfig[] = [
  {
    name: 'reviewer',
    agents: ['codex', 'antigravity', 'gemini', 'copilot', 'claude'],
    mode: 'read-only',
    purpose: 'Reviews a change or a piece of code and reports problems, without modifying anything.',
    isolation: 'inplace',
    system_prompt_file: 'roles/reviewer.md',
  },
  {
    name: 'implementer',
    agents: ['codex', 'antigravity', 'opencode', 'gemini', 'copilot', 'claude'],
    mode: 'write',
    purpose: 'Implements a well-defined change in an isolated worktree, with tests.',
    isolation: 'worktree',
    system_prompt_file: 'roles/implementer.md',
  },
  {
    name: 'investigator',
    agents: ['antigravity', 'codex', 'opencode', 'gemini', 'copilot', 'claude'],
    mode: 'read-only',
    purpose: 'Answers a question about the codebase or a failure, with evidence, without modifying anything.',
    isolation: 'auto',
    system_prompt_file: 'roles/investigator.md',
  },
];

/** English system prompts written by `caesar init` into `.caesar/roles/<name>.md`. Edit them freely afterwards. */
export const DEFAULT_ROLE_PROMPTS: Readonly<Record<string, string>> = {
  reviewer: `You are acting as a code reviewer for another agent that delegated this task to you.

- Read the code and the change you are pointed at; do not modify any file in the workspace.
- Look first for defects that would hurt a user: wrong behaviour, data loss, security holes, races, missing error
  handling. Then for missing or weak tests. Style comes last, and only when it hides a bug.
- Every finding names the file and, when you can, the line, says why it is a problem and what would fix it.
- Rate severity honestly: "high" means it should block the change.
- If everything looks right, say so plainly and say what you checked.
`,
  implementer: `You are implementing a change that another agent delegated to you. You work in an isolated copy of the
repository; your changes are reviewed as a diff before anyone applies them.

- Make the smallest change that fully meets the objective and the acceptance criteria.
- Follow the conventions of the surrounding code. Do not reformat unrelated code.
- Add or update tests that would fail without your change, and run them.
- Report every command you ran and its outcome. If something could not be done, say what and why.
`,
  investigator: `You are investigating a question for another agent that delegated it to you. Do not modify any file.

- Find the answer from evidence: the code, the history, logs, the output of read-only commands.
- Quote the file and line of each piece of evidence you rely on.
- Separate what you verified from what you suspect, and say how the suspicion could be checked.
- End with a short, direct answer to the question.
`,
};

export class RolePromptError extends Error {
  override readonly name = 'RolePromptError';
}

/**
 * A role's system prompt, read from `<root>/.caesar/<system_prompt_file>` whatever layer declared the role (so a
 * global role can have per-project wording). A missing file is an empty prompt; any other failure names the role.
 */
export async function readRolePrompt(root: string, role: RoleConfig): Promise<string> {
  if (!role.system_prompt_file) return '';
  const file = path.resolve(root, '.caesar', role.system_prompt_file);
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new RolePromptError(`Cannot read the system prompt of role "${role.name}" (${file}): ${(err as Error).message}`);
  }
}

export interface SkippedAgent {
  agent: string;
  reason: string;
}

export interface RolePickJudge {
  /** Why the agent cannot be used (not installed, unknown, refused by policy…), or undefined when it can. */
  unusable(agent: string): Promise<string | undefined>;
}

export type RolePick = { agent: string; skipped: SkippedAgent[] } | { agent?: undefined; skipped: SkippedAgent[]; reason: string };

/** Walks the role's agents in order and takes the first usable one, keeping each skip's reason. */
export async function pickRoleAgent(role: RoleConfig, judge: RolePickJudge): Promise<RolePick> {
  if (role.agents.length === 0) {
    return {
      skipped: [],
      reason:
        `Role "${role.name}" lists no agent: give it some with \`caesar role add ${role.name} --agents <id,…> --mode ${role.mode}\` ` +
        `(rewrites its [[role]] entry in .caesar/config.toml; --local or --global for the other config files).`,
    };
  }
  const skipped: SkippedAgent[] = [];
  for (const agent of role.agents) {
    const reason = await judge.unusable(agent);
    if (reason === undefined) return { agent, skipped };
    skipped.push({ agent, reason });
  }
  return {
    skipped,
    reason: `No agent of role "${role.name}" can run: ${skipped.map((s) => `${s.agent}: ${s.reason}`).join(' ; ')}`,
  };
}

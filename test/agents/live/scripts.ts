import * as path from 'node:path';
import { reportFor, type Args, type ModelRequest, type ToolCallSpec, type Turn } from '../fake-servers';
import type { LiveAgent } from './harness';

/**
 * What the fake model tells each agent to do, in the agent's own tool vocabulary (the names and argument shapes
 * each CLI declares to the model, seen in ../shared/agents/captures/).
 */

export const SHELL_COMMAND = 'echo probing-the-workspace';

/** A shell command in the agent's own tool vocabulary. */
export function shell(agent: LiveAgent, command: string): ToolCallSpec {
  switch (agent) {
    case 'codex':
      return { name: 'exec_command', args: { cmd: command } };
    case 'claude':
      return { name: 'Bash', args: { command, description: 'Probe the workspace' } };
    case 'copilot':
      return { name: 'bash', args: { command, description: 'Probe the workspace' } };
    case 'opencode':
      return { name: 'bash', args: { command, description: 'Probe the workspace' } };
    case 'gemini':
      return { name: 'run_shell_command', args: { command, description: 'Probe the workspace' } };
  }
}

/** Writes `target` — a path relative to the workspace, or an absolute one (the report file). */
function writeFile(agent: LiveAgent, target: string | ((r: ModelRequest) => string), content: string | ((r: ModelRequest) => string)): ToolCallSpec {
  const where = (r: ModelRequest) => {
    const t = typeof target === 'function' ? target(r) : target;
    return path.isAbsolute(t) ? t : path.join(r.workspace ?? '.', t);
  };
  const text = (r: ModelRequest) => (typeof content === 'function' ? content(r) : content);
  const args = (build: (file: string, body: string) => Args) => (r: ModelRequest) => build(where(r), text(r));
  switch (agent) {
    case 'codex':
      return {
        name: 'apply_patch',
        args: {},
        custom: (r) => `*** Begin Patch\n*** Add File: ${where(r)}\n${text(r).replace(/\n$/, '').split('\n').map((l) => `+${l}`).join('\n')}\n*** End Patch\n`,
      };
    case 'claude':
      return { name: 'Write', args: args((file_path, c) => ({ file_path, content: c })) };
    case 'copilot':
      return { name: 'create', args: args((p, c) => ({ path: p, file_text: c })) };
    case 'opencode':
      return { name: 'write', args: args((filePath, c) => ({ filePath, content: c })) };
    case 'gemini':
      return { name: 'write_file', args: args((file_path, c) => ({ file_path, content: c })) };
  }
}

function readFile(agent: LiveAgent, file: string): ToolCallSpec {
  const abs = (r: ModelRequest) => path.join(r.workspace ?? '.', file);
  switch (agent) {
    case 'codex':
      return { name: 'exec_command', args: { cmd: `cat ${file}` } };
    case 'claude':
      return { name: 'Read', args: (r) => ({ file_path: abs(r) }) };
    case 'copilot':
      return { name: 'view', args: (r) => ({ path: abs(r) }) };
    case 'opencode':
      return { name: 'read', args: (r) => ({ filePath: abs(r) }) };
    case 'gemini':
      return { name: 'read_file', args: (r) => ({ file_path: abs(r) }) };
  }
}

export type ReportWay = 'schema' | 'file';

/** How each agent hands its report back through caesar: the native schema tier where it exists, else the file. */
export const REPORT_WAY: Record<LiveAgent, ReportWay> = { codex: 'schema', claude: 'schema', opencode: 'file', copilot: 'file', gemini: 'file' };

const reportJson = (r: ModelRequest, fields: Record<string, unknown>) => JSON.stringify(reportFor(r, fields), null, 2) + '\n';

/** The report turns: a schema answer (codex: the final message; claude: its StructuredOutput tool) or a file write. */
function reportTurns(agent: LiveAgent, way: ReportWay, fields: Record<string, unknown>): Turn[] {
  if (way === 'schema' && agent === 'codex') return [{ kind: 'text', text: (r) => JSON.stringify(reportFor(r, fields)) }];
  if (way === 'schema' && agent === 'claude') return [{ kind: 'tools', calls: [{ name: 'StructuredOutput', args: (r) => reportFor(r, fields) }] }];
  return [
    { kind: 'tools', calls: [writeFile(agent, (r) => r.reportPath ?? '/nonexistent/report.json', (r) => reportJson(r, fields))] },
    // The fenced block lets the degraded tier find the report when the file could not be written (read-only modes).
    { kind: 'text', text: (r) => `Finished.\n\n\`\`\`json caesar:report\n${reportJson(r, fields)}\`\`\`\n` },
  ];
}

/** Runs a shell command, writes `file`, reports. */
export function writeScript(agent: LiveAgent, file: string, content: string, way: ReportWay = REPORT_WAY[agent]): Turn[] {
  return [
    { kind: 'tools', thinking: 'I will look around first.', text: 'Let me check the workspace.', calls: [shell(agent, SHELL_COMMAND)] },
    { kind: 'tools', text: `Writing ${file}.`, calls: [writeFile(agent, file, content)] },
    ...reportTurns(agent, way, {
      summary: `Wrote ${file}.`,
      changes: [{ path: file, action: 'created', summary: 'as asked' }],
      commands_run: [{ command: SHELL_COMMAND, exit_code: 0 }],
    }),
  ];
}

/** Reads a file, tries a write the read-only mode must stop (except opencode, confined by the worktree), reports. */
export function readOnlyScript(agent: LiveAgent, forbidden: string | undefined, way: ReportWay = REPORT_WAY[agent]): Turn[] {
  const turns: Turn[] = [{ kind: 'tools', text: 'Reading the README.', calls: [readFile(agent, 'README.md')] }];
  if (forbidden) turns.push({ kind: 'tools', calls: [writeFile(agent, forbidden, 'must not exist\n')] });
  turns.push(...reportTurns(agent, way, { summary: 'The README holds a title only.' }));
  return turns;
}

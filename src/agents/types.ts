import type { EventDraft, Mode, ReportTier, Task, Usage } from '../protocol';

/**
 * What an agent can do, as far as the orchestrator needs to know. Verified on real binaries where the adapter file
 * says so (../shared/agents/RECIPES.md); the rest is documented and says "unverified" in its file.
 */
export interface AgentCapabilities {
  /** The CLI can confine itself to reading (codex -s read-only, claude plan mode…). Without it, read-only tasks are forced into a worktree. */
  nativeReadOnly: boolean;
  /**
   * open: the orchestrator cannot cut the network; controllable: it can switch it per task; write-only: only a
   * writable sandbox can open it (codex); unknown: a template agent without network_args.
   */
  network: 'open' | 'controllable' | 'write-only' | 'unknown';
  /** Native structured output (codex --output-schema, claude --json-schema): the report tier "schema". */
  schemaTier: boolean;
  /** Can load the per-task MCP return channel. */
  channel: boolean;
  /** Accepts a model name. */
  model: boolean;
  /** Its stream carries tokens and/or cost. */
  reportsUsage: boolean;
}

/** Everything an adapter needs to build a command line. Paths are absolute. */
export interface BuildContext {
  task: Task;
  taskDir: string;
  /** The rendered brief (the prompt). Also written to `<taskDir>/brief.md` before spawn. */
  prompt: string;
  promptFile: string;
  tier: ReportTier;
  model?: string;
  /** Extra arguments given after `--` by the user; they always come last. */
  extraArgs: string[];
  /** The strict report schema file, present in the schema tier. */
  reportSchemaFile: string;
  finalMessageFile: string;
}

/** A process to start: argv only, never a shell. */
export interface SpawnPlan {
  command: string;
  args: string[];
  cwd: string;
  /** Added on top of the inherited environment and the eight CAESAR_* variables. */
  env?: Record<string, string>;
  /** Fed to stdin then closed; when absent stdin is closed at once. Lets agents read the prompt off argv. */
  stdin?: string;
  /** Files to write before spawn (e.g. an MCP config). `restore` puts the previous content back afterwards. */
  files?: Array<{ path: string; content: string; restore?: boolean }>;
  /** Paths the orchestrator laid down in the workspace, excluded from the diff (exact path, relative to workspace). */
  excludeFromDiff?: string[];
  /** The command line as shown to people (prompt elided), for the `started` event and `ps`. */
  display: string;
}

/** What a translator concludes once the stream has ended. Exit codes alone lie for several CLIs. */
export interface TranslationSummary {
  /** The last non-empty final message; the degraded tier extracts a report from it. */
  finalText?: string;
  /** The structured answer of the schema tier (claude result.structured_output), not yet validated. */
  structuredOutput?: unknown;
  usage?: Usage;
  /** A failure the stream declared even when the exit code says 0 (claude is_error, gemini result.status=error). */
  nativeFailure?: string;
  /** The agent CLI's own session id, when its stream named one (stream.ts NativeSession). */
  sessionId?: string;
}

/**
 * Stateful, one per run: pairs tool starts with their ends by native id, merges partial messages, accumulates usage.
 * Must never throw on unknown or malformed lines (they stay in raw.log).
 */
export interface Translator {
  line(native: string): EventDraft[];
  end(exitCode: number | null): TranslationSummary;
  /**
   * The agent's own session id as soon as its stream named it (before the end, so that a run whose supervisor dies
   * can still be resumed); absent for agents whose stream names none.
   */
  sessionId?(): string | undefined;
}

/**
 * What a translator may need to know about its run. Optional so a translator can always be created bare (replay
 * tests); the supervisor passes it so that e.g. codex's absolute `file_change` paths come out relative to the
 * workspace, like git's (reference §8.22).
 */
export interface TranslatorContext {
  /** The directory the agent works in (the worktree or the user's workspace), absolute. */
  workspace: string;
}

export interface AgentAdapter {
  id: string;
  displayName: string;
  /** The executable looked up on PATH (or an absolute path). */
  bin: string;
  capabilities: AgentCapabilities;
  build(ctx: BuildContext): SpawnPlan;
  createTranslator(ctx?: TranslatorContext): Translator;
  /** Arguments that print the version (doctor). */
  versionArgs?: string[];
  /** How a person installs the CLI when it is missing (doctor prints it); the version our live tests ran. */
  installHint?: string;
  /**
   * The environment variables the agent documents for itself (API keys, its home folder, endpoints): what the
   * `minimal` env policy passes on besides the base set. A name ending in `*` is a prefix (`ANTHROPIC_*`).
   */
  envKeys?: readonly string[];
  /** The agent's Agent Client Protocol entry point, when it has one (the `acp` transport, src/engine/acp/). */
  acp?: AcpEntry;
}

/**
 * How an agent is started to speak ACP over its stdio. The prompt never goes on argv nor stdin here: it travels as
 * `session/prompt` once the session exists, so the plan has no `stdin`.
 */
export interface AcpEntry {
  plan(ctx: BuildContext): SpawnPlan;
  /** The version the ACP mode was driven on (docs, doctor), e.g. "0.61.0 (--acp)". */
  verified?: string;
  /**
   * Declare `fs.readTextFile` to the agent (default true). gemini 0.61.0 fails `write_file` on a new file when a read
   * of the missing file is answered with an error (../shared/agents/ACP.md): it reads from disk itself instead.
   */
  readTextFile?: boolean;
  /**
   * Why this ACP agent cannot run inside caesar's sandbox (src/engine/sandbox/), when it cannot: with `[sandbox] mode =
   * "auto"` it then runs unconfined with a high finding saying so, and `required` refuses it.
   */
  cannotBeSandboxed?: string;
  /**
   * The plan to run instead when the agent runs inside caesar's sandbox, for an agent whose own sandbox cannot nest in
   * ours: it hands the confinement to ours (which the kernel enforces for its whole process tree) instead of failing.
   */
  insideSandbox?(plan: SpawnPlan): SpawnPlan;
}

/** A translator for agents whose stdout is not a stream we understand (template agents): no events, no final text. */
export function silentTranslator(): Translator {
  return { line: () => [], end: () => ({}) };
}

export type { Mode };

import * as path from 'node:path';

/**
 * The state each real agent CLI writes under its user's home: its sessions, caches, logs and the helpers it unpacks
 * (learnt from test/agents/live and each CLI's documentation). Inside the sandbox these stay writable for the agent
 * that owns them and are hidden from every other agent (they hold its credentials: auth.json, .credentials.json…).
 */
export interface AgentStatePath {
  path: string;
  /** A file rather than a directory (created when missing). */
  file?: boolean;
  /**
   * A file's content when it is missing: it is created with it before the agent starts, since it cannot be created
   * inside (its parent, the home, is read-only there). Without one, a missing file stays missing.
   */
  initial?: string;
}

interface Homes {
  home: string;
  config: string;
  data: string;
  state: string;
  cache: string;
}

function homesOf(env: NodeJS.ProcessEnv): Homes | undefined {
  const home = env.HOME;
  if (!home || !path.isAbsolute(home)) return undefined;
  const xdg = (name: string, fallback: string) => (env[name] && path.isAbsolute(env[name]!) ? env[name]! : path.join(home, fallback));
  return { home, config: xdg('XDG_CONFIG_HOME', '.config'), data: xdg('XDG_DATA_HOME', '.local/share'), state: xdg('XDG_STATE_HOME', '.local/state'), cache: xdg('XDG_CACHE_HOME', '.cache') };
}

const DECLARED: Record<string, (h: Homes, env: NodeJS.ProcessEnv) => AgentStatePath[]> = {
  codex: (h, env) => [{ path: env.CODEX_HOME && path.isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : path.join(h.home, '.codex') }],
  claude: (h, env) => [
    { path: env.CLAUDE_CONFIG_DIR && path.isAbsolute(env.CLAUDE_CONFIG_DIR) ? env.CLAUDE_CONFIG_DIR : path.join(h.home, '.claude') },
    // Claude Code hangs (ACP: at session/new) when it cannot create ~/.claude.json; given `{}` it fills it in place.
    { path: path.join(h.home, '.claude.json'), file: true, initial: '{}\n' },
  ],
  gemini: (h) => [{ path: path.join(h.home, '.gemini') }],
  antigravity: (h) => [{ path: path.join(h.home, '.gemini') }, { path: path.join(h.home, '.antigravity') }],
  opencode: (h) => ['config', 'data', 'state', 'cache'].map((k) => ({ path: path.join(h[k as keyof Homes], 'opencode') })),
  copilot: (h) => [{ path: path.join(h.home, '.copilot') }, { path: path.join(h.cache, 'copilot') }],
};

/** The state paths of one agent (none for the demo agent and [[agent]] templates: they declare none). */
export function agentStatePaths(agentId: string, env: NodeJS.ProcessEnv): AgentStatePath[] {
  const homes = homesOf(env);
  const declare = DECLARED[agentId];
  return homes && declare ? declare(homes, env) : [];
}

/** Every other known agent's state: hidden from this one. */
export function otherAgentsStatePaths(agentId: string, env: NodeJS.ProcessEnv): AgentStatePath[] {
  const own = new Set(agentStatePaths(agentId, env).map((p) => p.path));
  return Object.keys(DECLARED)
    .filter((id) => id !== agentId)
    .flatMap((id) => agentStatePaths(id, env))
    .filter((p) => !own.has(p.path));
}

/**
 * Inside each agent's own state: what names programs its CLI runs, or instructions it follows, when the user runs it
 * outside Caesar (agent-config.ts keeps the agent from changing them). From each CLI's documentation: claude
 * settings (hooks, apiKeyHelper, statusLine), ~/.claude.json (MCP servers), CLAUDE.md, commands, agents, skills;
 * codex config.toml (notify, MCP servers), AGENTS.md, prompts, rules; gemini settings.json (MCP
 * servers, hooks), .env, GEMINI.md, commands, extensions; opencode's config and its plugins, agents, commands, tools
 * (node_modules: the plugins' code); copilot's settings, MCP config and agents.
 */
const CONFIG: Record<string, (h: Homes, env: NodeJS.ProcessEnv) => string[]> = {
  claude: (h, env) => {
    const dir = agentStatePaths('claude', env)[0]!.path;
    // Not plugins/: claude writes plugins/store/ itself as it starts (measured, 2.1.332).
    const names = ['settings.json', 'settings.local.json', 'CLAUDE.md', 'commands', 'agents', 'skills', 'hooks', 'output-styles'];
    return [...names.map((n) => path.join(dir, n)), path.join(h.home, '.claude.json')];
  },
  codex: (_h, env) => {
    const dir = agentStatePaths('codex', env)[0]!.path;
    // Not skills/ nor plugins/: codex itself writes them as it starts (its bundled skills: measured, 0.171.0).
    return ['config.toml', 'AGENTS.md', 'AGENTS.override.md', 'prompts', 'rules'].map((n) => path.join(dir, n));
  },
  gemini: (h) => geminiConfig(h),
  antigravity: (h) => [...geminiConfig(h), ...['settings.json', 'mcp_config.json'].map((n) => path.join(h.home, '.antigravity', n))],
  opencode: (h) => {
    const names = ['opencode.json', 'opencode.jsonc', 'config.json', 'AGENTS.md', 'package.json', 'node_modules', 'plugin', 'plugins', 'agent', 'agents', 'command', 'commands', 'mode', 'modes', 'tool', 'tools'];
    return names.map((n) => path.join(h.config, 'opencode', n));
  },
  // Not config.json: copilot creates and rewrites it itself ("managed automatically"; measured, 1.0.102).
  copilot: (h) => ['settings.json', 'mcp-config.json', 'agents', 'copilot-instructions.md', 'hooks'].map((n) => path.join(h.home, '.copilot', n)),
};

function geminiConfig(h: Homes): string[] {
  return ['settings.json', '.env', 'GEMINI.md', 'commands', 'extensions'].map((n) => path.join(h.home, '.gemini', n));
}

/** The configuration paths of one agent's own state (none for the demo agent and templates). */
export function agentConfigPaths(agentId: string, env: NodeJS.ProcessEnv): string[] {
  const homes = homesOf(env);
  const declare = CONFIG[agentId];
  return homes && declare ? declare(homes, env) : [];
}

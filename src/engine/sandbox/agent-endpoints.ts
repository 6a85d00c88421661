import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Where each real agent CLI sends its model requests: the one place a `network: false` task may still reach (the
 * sandbox's allow-list, network.ts). Declared per adapter, from the variables and config files each CLI documents for
 * its base URL; without one, the vendor's API host. A template agent ([[agent]]) and the demo agent declare none:
 * `[sandbox] allow_hosts` names theirs.
 */
const DECLARED: Record<string, (env: NodeJS.ProcessEnv) => string[]> = {
  claude: (env) => firstOf([env.ANTHROPIC_BASE_URL], ['https://api.anthropic.com']),
  // codex: the base_url of its config.toml providers (CODEX_HOME), or OPENAI_BASE_URL, else OpenAI (and ChatGPT's login).
  codex: (env) => firstOf([env.OPENAI_BASE_URL, ...tomlBaseUrls(codexConfig(env))], ['https://api.openai.com', 'https://chatgpt.com']),
  gemini: (env) => firstOf([env.GOOGLE_GEMINI_BASE_URL, env.GOOGLE_VERTEX_BASE_URL], ['https://generativelanguage.googleapis.com']),
  antigravity: (env) => firstOf([env.GOOGLE_GEMINI_BASE_URL], ['https://cloudcode-pa.googleapis.com']),
  copilot: (env) => firstOf([env.COPILOT_PROVIDER_BASE_URL], ['https://api.githubcopilot.com', 'https://api.github.com']),
  // opencode: the baseURL of each provider in its config (OPENCODE_CONFIG, or its config dir), else models.dev's hosts.
  opencode: (env) => firstOf(opencodeConfigs(env).flatMap(jsonBaseUrls), ['https://opencode.ai', 'https://models.dev']),
};

/** The model endpoints of one agent (URLs or host[:port]); none for an agent that declares none. */
export function agentModelEndpoints(agentId: string, env: NodeJS.ProcessEnv): string[] {
  return DECLARED[agentId]?.(env) ?? [];
}

function firstOf(configured: Array<string | undefined>, defaults: string[]): string[] {
  const given = configured.filter((value): value is string => !!value && value.trim() !== '');
  return given.length ? [...new Set(given)] : defaults;
}

function codexConfig(env: NodeJS.ProcessEnv): string | undefined {
  const home = env.CODEX_HOME && path.isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : env.HOME ? path.join(env.HOME, '.codex') : undefined;
  return home ? readSmall(path.join(home, 'config.toml')) : undefined;
}

function opencodeConfigs(env: NodeJS.ProcessEnv): string[] {
  const configHome = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, '.config') : undefined);
  const files = [env.OPENCODE_CONFIG, ...(configHome ? ['opencode.json', 'opencode.jsonc'].map((name) => path.join(configHome, 'opencode', name)) : [])];
  return files.filter((file): file is string => !!file && path.isAbsolute(file)).map(readSmall).filter((text): text is string => text !== undefined);
}

/** `base_url = "…"` lines of a TOML file (read as text: only the values matter, and a broken file gives none). */
function tomlBaseUrls(text: string | undefined): string[] {
  return [...(text ?? '').matchAll(/^\s*base_url\s*=\s*["']([^"'\n]+)["']/gm)].map((m) => m[1]!);
}

/** `"baseURL": "…"` values of a JSON(C) file. */
function jsonBaseUrls(text: string): string[] {
  return [...text.matchAll(/"baseURL"\s*:\s*"([^"\n]+)"/g)].map((m) => m[1]!);
}

/** A config file's text, when it is a small regular file (a user's config, never a device or a huge file). */
function readSmall(file: string): string | undefined {
  try {
    const stat = statSync(file);
    return stat.isFile() && stat.size <= 1_000_000 ? readFileSync(file, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

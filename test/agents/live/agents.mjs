// The pinned agent CLIs (../shared/agents/RECIPES.md) and where they live in the versioned cache outside the clone.
// Shared by install.mjs (which installs them) and run.mjs / the live tests (which look for them).
import { homedir } from 'node:os';
import { join } from 'node:path';

export const PINNED = [
  { agent: 'codex', pkg: '@openai/codex', version: '0.171.0' },
  { agent: 'claude', pkg: '@anthropic-ai/claude-code', version: '2.1.332' },
  { agent: 'opencode', pkg: 'opencode-ai', version: '1.18.33' },
  // opencode asks the npm registry for its plugin package on a first run; offline it must already be there.
  { agent: 'opencode-plugin', pkg: '@opencode-ai/plugin', version: '1.18.33' },
  { agent: 'copilot', pkg: '@github/copilot', version: '1.0.102' },
  { agent: 'gemini', pkg: '@google/gemini-cli', version: '0.61.0' },
  // The ACP adapters for the two CLIs that do not speak ACP themselves (../shared/agents/ACP.md). Their `agent` is
  // the program name the ACP transport looks up on PATH.
  { agent: 'claude-agent-acp', pkg: '@zed-industries/claude-agent-acp', version: '0.23.1' },
  { agent: 'codex-acp', pkg: '@zed-industries/codex-acp', version: '0.16.0' },
];

export function cacheRoot() {
  return process.env.CAESAR_CACHE || join(homedir(), '.cache', 'caesar-dev');
}

/** `<cache>/agents/<pkg>@<version>/` — the npm prefix the package is installed into. */
export function installDir(entry) {
  return join(cacheRoot(), 'agents', `${entry.pkg}@${entry.version}`);
}

/** Written last by install.mjs: its presence means the install finished. */
export function doneMarker(entry) {
  return join(installDir(entry), '.installed');
}

/** The executable each live test runs (the native binary for copilot: its Node loader orphans it on SIGTERM). */
export function binaryOf(entry) {
  const dir = join(installDir(entry), 'node_modules');
  switch (entry.agent) {
    case 'codex': return join(dir, '.bin', 'codex');
    case 'claude': return join(dir, '.bin', 'claude');
    case 'opencode': return join(dir, '.bin', 'opencode');
    case 'copilot': return join(dir, '@github', 'copilot-linux-x64', 'copilot');
    case 'gemini': return join(dir, '.bin', 'gemini');
    case 'claude-agent-acp': return join(dir, '.bin', 'claude-agent-acp');
    // The native binary: its Node wrapper would be the process group leader's only child worth killing.
    case 'codex-acp': return join(dir, '@zed-industries', 'codex-acp-linux-x64', 'bin', 'codex-acp');
    default: return undefined;
  }
}

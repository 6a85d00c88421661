import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PINNED, binaryOf, installDir } from './agents.mjs';

/**
 * What every live test needs: the pinned binaries on a PATH of their own, a fresh HOME per agent pointed at a fake
 * model server (config reaches the CLIs through the environment the caesar supervisor inherits, and through their own
 * config files under that HOME), and a throw-away git repository.
 */

export type LiveAgent = 'codex' | 'claude' | 'opencode' | 'copilot' | 'gemini';

/** A directory holding one executable per agent id, linked to the pinned install in the cache. */
export function pinnedBinDir(root: string): string {
  const dir = path.join(root, 'bin');
  fs.mkdirSync(dir, { recursive: true });
  for (const entry of PINNED) {
    const target = binaryOf(entry);
    if (!target) continue;
    const link = path.join(dir, entry.agent);
    if (!fs.existsSync(link)) fs.symlinkSync(target, link);
  }
  return dir;
}

/** Model names the CLIs accept offline (codex: from `codex debug models --bundled`). */
export const MODELS: Record<LiveAgent, string> = {
  codex: 'gpt-5.5',
  claude: 'claude-sonnet-4-5',
  opencode: 'fake/fake-model',
  copilot: 'claude-sonnet-4.5',
  gemini: 'gemini-2.5-flash',
};

/**
 * The environment (and config files) that point one agent at the fake server. Nothing here is read by caesar
 * itself: the supervisor passes its environment on to the agent, which is how a user configures a CLI too.
 */
export function agentEnv(agent: LiveAgent, serverUrl: string, home: string): Record<string, string> {
  fs.mkdirSync(home, { recursive: true });
  const tmp = path.join(home, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  // No compile cache: Caesar's processes (a supervisor as it exits, the next idle one) would write it under this HOME
  // after the suite's last task, while the suite removes the folder.
  const base = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local/share'), XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local/state'), CAESAR_COMPILE_CACHE: 'off' };
  switch (agent) {
    case 'codex': {
      const codexHome = path.join(home, '.codex');
      fs.mkdirSync(codexHome, { recursive: true });
      fs.writeFileSync(
        path.join(codexHome, 'config.toml'),
        [
          'model_provider = "fake"',
          '[model_providers.fake]',
          'name = "fake"',
          `base_url = "${serverUrl}/v1"`,
          'wire_api = "responses"',
          'env_key = "FAKE_API_KEY"',
          'request_max_retries = 0',
          'stream_max_retries = 0',
          '[features]',
          'plugins = false',
          'apps = false',
          'remote_plugin = false',
          '[analytics]',
          'enabled = false',
          '',
        ].join('\n'),
      );
      // With bwrap installed (codex-acp needs it; .ci/run installs bubblewrap) codex sandboxes its commands through a
      // helper it refuses to create when CODEX_HOME lies under the temporary directory ("Refusing to create helper
      // binaries under temporary dir"), and then every command and file write fails. Here the whole run lives in
      // /tmp, so codex gets a TMPDIR of its own that does not contain CODEX_HOME, as a user's ~/.codex never is.
      return { ...base, CODEX_HOME: codexHome, FAKE_API_KEY: 'dummy', TMPDIR: tmp };
    }
    case 'claude':
      return {
        ...base,
        ANTHROPIC_BASE_URL: serverUrl,
        ANTHROPIC_API_KEY: 'dummy',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_MAX_RETRIES: '0',
      };
    case 'opencode': {
      const configDir = path.join(base.XDG_CONFIG_HOME, 'opencode');
      fs.mkdirSync(configDir, { recursive: true });
      // Offline, opencode must find its plugin package already installed, or it asks the npm registry.
      const plugin = PINNED.find((e) => e.agent === 'opencode-plugin')!;
      fs.writeFileSync(path.join(configDir, 'package.json'), JSON.stringify({ dependencies: { [plugin.pkg]: plugin.version } }) + '\n');
      const modules = path.join(configDir, 'node_modules');
      if (!fs.existsSync(modules)) fs.cpSync(path.join(installDir(plugin), 'node_modules'), modules, { recursive: true, verbatimSymlinks: true });
      const configFile = path.join(home, 'opencode.json');
      fs.writeFileSync(
        configFile,
        JSON.stringify({
          provider: { fake: { npm: '@ai-sdk/openai-compatible', name: 'Fake', options: { baseURL: `${serverUrl}/v1`, apiKey: 'dummy' }, models: { 'fake-model': { name: 'Fake', tool_call: true } } } },
          model: 'fake/fake-model',
          small_model: 'fake/fake-model',
          autoupdate: false,
          share: 'disabled',
        }),
      );
      return { ...base, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_CONFIG: configFile };
    }
    case 'copilot':
      return {
        ...base,
        COPILOT_OFFLINE: 'true',
        COPILOT_PROVIDER_BASE_URL: serverUrl,
        COPILOT_PROVIDER_TYPE: 'anthropic',
        COPILOT_PROVIDER_API_KEY: 'dummy',
        COPILOT_MODEL: MODELS.copilot,
        COPILOT_AUTO_UPDATE: 'false',
      };
    case 'gemini': {
      const settingsDir = path.join(home, '.gemini');
      fs.mkdirSync(settingsDir, { recursive: true });
      fs.writeFileSync(
        path.join(settingsDir, 'settings.json'),
        JSON.stringify({
          security: { auth: { selectedType: 'gemini-api-key' } },
          general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
        }),
      );
      return { ...base, TMPDIR: tmp, GEMINI_API_KEY: 'fake-key', GOOGLE_GEMINI_BASE_URL: serverUrl };
    }
  }
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), prefix));
}

/**
 * Removes a suite's scratch folder (kept with CAESAR_KEEP_LIVE). Retried: as the last task ends, its supervisor and the
 * next idle one may still write their last files there (the compile cache under the suite's HOME), which made rmdir
 * fail with ENOTEMPTY.
 */
export function removeScratch(root: string): void {
  if (!root || process.env.CAESAR_KEEP_LIVE) return;
  try {
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (error) {
    // A scratch folder left in the temp folder is no test's failure: said, not thrown.
    console.warn(`      (scratch folder ${root} not removed: ${(error as Error).message})`);
  }
}

/** A git repository with one commit, as a user's project would be. */
export function makeRepo(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  };
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'test@example.invalid');
  git('config', 'user.name', 'Caesar Test');
  fs.writeFileSync(path.join(dir, 'README.md'), '# fixture\n');
  git('add', '.');
  git('commit', '-q', '-m', 'initial');
  return dir;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a process to completion (stdin closed unless given), with a hard timeout that kills its process group. */
export function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number }): Promise<Ran> {
  return new Promise((ok, fail) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin ?? '');
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      fail(new Error(`${command} ${args.slice(0, 3).join(' ')} timed out; stderr: ${stderr.slice(-2000)}`));
    }, opts.timeoutMs ?? 120_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

/** The bundled caesar CLI the live tests run (built by `npm run build`). */
export const CAESAR_JS = path.resolve(__dirname, '..', '..', '..', 'dist', 'caesar.js');

/** Runs `node dist/caesar.js …` to completion. */
export function runCaesar(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Ran> {
  return run(process.execPath, [CAESAR_JS, ...args], { cwd: opts.cwd, env: opts.env, timeoutMs: opts.timeoutMs ?? 360_000 });
}

/**
 * The JSON object in a tool result as a CLI handed it to the model: claude 2.1.332 sends an MCP tool's
 * `structuredContent` as JSON text (not its human text); codex 0.171.0 sends the text parts after a "Wall time…"
 * line. Returns undefined when the text holds no JSON object.
 */
export function jsonInText(text: string): Record<string, unknown> | undefined {
  const attempts = [text.trim(), text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)];
  for (const candidate of attempts) {
    try {
      const parsed: unknown = JSON.parse(candidate);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * codex 0.171.0 may send its first model request before caesar's return channel answered `initialize` (seen under
 * load: a channel call then fails "unsupported call: mcp__caesarget_task"). A real model only calls what it was
 * shown, so a codex script waits until the request carries the channel's instructions.
 */
export const codexSeesChannel = (requestText: string): boolean => requestText.includes('The return channel to the orchestrator');

import { execFile } from 'node:child_process';
import { promises as fs, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';
import { DEMO_AGENT_ID } from '../../agents/demo';
import type { GenericAgentDefinition } from '../../agents/generic';
import { catalogueAdapters } from '../../agents/registry';
import type { AgentAdapter, AgentCapabilities } from '../../agents/types';
import { reportedVersion } from '../../base/version';

/**
 * What delegation resolution and `caesar doctor` need to know about agents, behind an interface so the resolution
 * can be tested with a catalogue of fake programs, and so the extension can share one cached instance.
 */
export interface AgentCatalogue {
  /** Catalogue order: built-in agents, then `[[agent]]` entries that are not overrides. */
  ids(): string[];
  capabilities(id: string): AgentCapabilities | undefined;
  /** The program can be found (PATH with execute permission, or an absolute path). */
  isInstalled(id: string): Promise<boolean>;
  displayName(id: string): string;
  /** How to install the agent's CLI, when its adapter says. */
  installHint?(id: string): string | undefined;
  /** First line of `<bin> --version` within VERSION_TIMEOUT_MS; undefined when not installed, silent or too slow. */
  version?(id: string): Promise<string | undefined>;
  /** Where the program was found (doctor shows it). */
  location?(id: string): Promise<string | undefined>;
  /** The adapter has an ACP command line (transport "acp" is possible); absent means no. */
  speaksAcp?(id: string): boolean;
}

/** Probes run in parallel; some CLIs (opencode, gemini) take 10-20 s to print a version on a busy machine. */
export const VERSION_TIMEOUT_MS = 20_000;

/** Looks a program up like a shell would: a path is checked as is, a bare name along PATH (PATHEXT on Windows). */
export async function findProgram(bin: string, env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): Promise<string | undefined> {
  if (bin.trim() === '') return undefined;
  const extensions = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean)] : [''];
  const candidates = bin.includes('/') || bin.includes(path.sep) ? [path.resolve(baseDir, bin)] : (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, bin));
  for (const candidate of candidates) {
    for (const ext of extensions) {
      if (await isExecutableFile(candidate + ext)) return candidate + ext;
    }
  }
  return undefined;
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return false;
    await fs.access(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs `<file> <args>` with a hard timeout and returns the first non-empty output line. Never throws. */
export function probeVersion(file: string, args: string[] = ['--version'], env: NodeJS.ProcessEnv = process.env, timeoutMs = VERSION_TIMEOUT_MS): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, killSignal: 'SIGKILL', env, windowsHide: true, maxBuffer: 64 * 1024 }, (_err, stdout, stderr) => {
      const first = `${stdout}\n${stderr}`.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== '');
      resolve(first);
    });
  });
}

export interface AdapterCatalogueOptions {
  env?: NodeJS.ProcessEnv;
  /** Agents that ship with caesar and need no lookup (the demo agent); their version is caesar's. */
  builtIn?: Record<string, string>;
  /** Where a relative program path (`./tools/agent`) is resolved from: the caesar root, not wherever we run. */
  baseDir?: string;
}

/** A catalogue over adapter objects (src/agents/*): PATH lookup and version probing, memoized per instance. */
export function catalogueFromAdapters(adapters: readonly AgentAdapter[], options: AdapterCatalogueOptions = {}): AgentCatalogue {
  const env = options.env ?? process.env;
  const byId = new Map(adapters.map((a) => [a.id, a]));
  const located = new Map<string, Promise<string | undefined>>();
  const locate = (id: string): Promise<string | undefined> => {
    const adapter = byId.get(id);
    if (!adapter) return Promise.resolve(undefined);
    let found = located.get(id);
    if (!found) {
      found = options.builtIn?.[id] !== undefined ? Promise.resolve(adapter.bin) : findProgram(adapter.bin, env, options.baseDir);
      located.set(id, found);
    }
    return found;
  };
  return {
    ids: () => [...byId.keys()],
    capabilities: (id) => byId.get(id)?.capabilities,
    displayName: (id) => byId.get(id)?.displayName ?? id,
    installHint: (id) => byId.get(id)?.installHint,
    isInstalled: async (id) => (await locate(id)) !== undefined,
    location: locate,
    speaksAcp: (id) => byId.get(id)?.acp !== undefined,
    version: async (id) => {
      const builtIn = options.builtIn?.[id];
      if (builtIn !== undefined) return builtIn;
      const file = await locate(id);
      return file ? probeVersion(file, byId.get(id)?.versionArgs ?? ['--version'], env) : undefined;
    },
  };
}

/**
 * The catalogue the product uses: the registry's built-in adapters (src/agents/registry.ts) plus the configuration's
 * `[[agent]]` entries, an entry with a built-in id replacing the built-in. The demo agent ships inside caesar, so it
 * is always installed and its version is caesar's.
 */
export function defaultAgentCatalogue(entries: readonly GenericAgentDefinition[], env: NodeJS.ProcessEnv = process.env, baseDir?: string): AgentCatalogue {
  const adapters = catalogueAdapters(entries);
  const demoOverridden = entries.some((entry) => entry.id === DEMO_AGENT_ID);
  const caesarVersion = env.CAESAR_VERSION ?? reportedVersion();
  return catalogueFromAdapters(adapters, {
    env,
    ...(baseDir ? { baseDir } : {}),
    builtIn: demoOverridden ? {} : { [DEMO_AGENT_ID]: `built in (caesar ${caesarVersion})` },
  });
}

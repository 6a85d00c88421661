import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths, type ProtocolEvent } from '../../../src/protocol';
import { makeRepo, runCliScript, type CliRun } from '../../engine/runtime/helpers';
import { ensureFreshDist } from '../../support/dist-freshness.mjs';

/*
 * Runs the real `caesar run` (dist/caesar.js, its supervisor, a worktree, the sandbox where bwrap runs) in a fresh
 * repository, with fake CLIs first on PATH under the names the adapter runs: the replays of captures of the real CLIs.
 */

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const CAESAR_JS = path.join(REPO_ROOT, 'dist', 'caesar.js');

export interface Outcome {
  task_id: string;
  status: string;
  report: { status: string; summary: string };
  diff: { files: Array<{ path: string }> };
}

export interface Replayed {
  run: CliRun;
  outcome: Outcome;
  /** events.jsonl as the supervisor wrote it. */
  events: ProtocolEvent[];
  /** state.json as the supervisor left it (its seal is the store's business, not the replay's). */
  state: { agent_session?: { id: string } };
}

export class CaesarRunReplays {
  private readonly scratch: string[] = [];

  /** Builds dist/ from the current sources when it is older (call in `before`). */
  prepare(): void {
    ensureFreshDist(REPO_ROOT);
  }

  /** `fakes`: executable name → script content. */
  async run(fakes: Record<string, string>, args: string[]): Promise<Replayed> {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-replay-run-')));
    this.scratch.push(dir);
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    for (const [name, script] of Object.entries(fakes)) writeFileSync(path.join(bin, name), script, { mode: 0o755 });
    const repo = makeRepo();
    this.scratch.push(repo);
    const run = await runCliScript(CAESAR_JS, ['run', ...args, '--isolation', 'worktree', '--json'], repo, 60_000, cliEnv(dir, bin));
    let outcome: Outcome;
    try {
      outcome = JSON.parse(run.stdout) as Outcome;
    } catch {
      throw new Error(`caesar run printed no outcome (exit ${run.code}): ${run.stderr}`);
    }
    const state = JSON.parse(readFileSync(taskPaths(repo, outcome.task_id).state, 'utf8')) as Replayed['state'];
    return { run, outcome, events: readEvents(repo, outcome.task_id), state };
  }

  cleanup(): void {
    for (const dir of this.scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** The user's environment without Caesar's own variables, a private HOME, and the fakes first on PATH. */
function cliEnv(dir: string, bin: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CAESAR_')));
  const home = path.join(dir, 'home');
  mkdirSync(home);
  return { ...env, HOME: home, PATH: `${bin}:${process.env.PATH ?? ''}`, CAESAR_WARM_SUPERVISOR: '0' };
}

function readEvents(repo: string, id: string): ProtocolEvent[] {
  return readFileSync(taskPaths(repo, id).events, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as ProtocolEvent);
}

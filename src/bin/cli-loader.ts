import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { reportedVersion } from '../base/version';
// Straight to the launch room, not through engine/tasks: this loader starts before any bundle is loaded and may use
// only Node's built-ins and this one module (the supervisor's standby), or every `caesar` call would pay for the engine.
import { locateSupervisor, prestartSupervisor } from '../engine/launch/supervisor-process';
// Also not through engine/tasks: the same reason, a look (fs only) for the user's warm supervisor (warm-common.ts).
import { idleSocket } from '../engine/launch/warm-common';
import { requireWithCodeCache } from './compile-cache';

/**
 * The process entry of dist/caesar.js: a loader a few KiB in size in front of the `caesar` command line
 * (dist/caesar-main.js, from src/bin/caesar.ts). Three things happen here, before the 1.9 MB bundle is even read, because
 * every `caesar` command pays for loading it (issue 14):
 * - `caesar --version` (what editors and scripts run to find and check the CLI) is answered without loading it;
 * - `caesar run` will need a task supervisor, a second Node process: a standby one starts now, so that its start-up
 *   overlaps the CLI's own instead of following it (supervisor-process.ts);
 *   (unless the user's warm supervisor is already waiting for the task: warm-client.ts);
 * - `caesar run` loads its own lean bundle (dist/caesar-run.js, run-main.ts): a task's CLI is on its critical path;
 * - the bundle runs with V8's compiled code cached between runs (compile-cache.ts).
 */
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${reportedVersion()}\n`);
} else if (args[0] === 'run' && !args.includes('--help') && !args.includes('-h')) {
  if (!idleSupervisorWaiting()) prestartSupervisor();
  requireWithCodeCache(runBundle());
} else {
  requireWithCodeCache(path.join(__dirname, 'caesar-main.js'));
}

/**
 * `caesar run`'s lean bundle (run-main.ts), or the full one where it was not built (a bundle copied alone): the
 * same command either way, the lean one loads a third of the code and builds none of the MCP and ACP SDKs' schemas.
 */
function runBundle(): string {
  const lean = path.join(__dirname, 'caesar-run.js');
  return existsSync(lean) ? lean : path.join(__dirname, 'caesar-main.js');
}

/** An idle warm supervisor of this build is listening: `caesar run` will hand it the task, no standby is needed. */
function idleSupervisorWaiting(): boolean {
  try {
    return idleSocket(locateSupervisor()) !== undefined;
  } catch {
    return false;
  }
}

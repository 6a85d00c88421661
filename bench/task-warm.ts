/**
 * The task bench's helpers for the warm supervisor (issue 27) and the conclusion's git work:
 * - a warm folder of the bench's own (so no other user of the machine's idle supervisor is involved), a `prepare`
 *   that waits (untimed) until an idle supervisor listens, as it does for a user's next task, and the cleanup that
 *   ends the bench's idle supervisors;
 * - what an idle supervisor holds while it waits (its resident set), measured apart from any task;
 * - how many git processes a task starts, and how many of them after its agent has ended (the conclusion), counted
 *   through a `git` on PATH that logs each call and execs the real one.
 */
import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { probeIdleSupervisor, startIdleSupervisor } from '../src/engine/launch/warm-client';
import { benchDir, remember } from './lib';

export function warmFolder(): string {
  const dir = remember(benchDir('cw-'));
  chmodSync(dir, 0o700);
  return dir;
}

/**
 * Untimed: until an idle supervisor of this bundle listens (a user's next task finds one waiting). The first time
 * there is none yet (a user's first task after a while starts one; delegate() does, the bench does here).
 */
export async function waitForIdle(cli: string, env: NodeJS.ProcessEnv): Promise<number> {
  const script = path.join(path.dirname(cli), 'supervisor.js');
  for (let i = 0; i < 600; i++) {
    const hello = await probeIdleSupervisor(script, env);
    if (hello) return hello.pid;
    if (i === 0) startIdleSupervisor(script, env);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no idle supervisor started within 30 s');
}

/** Ends this bundle's idle supervisors (their command lines name the bench's private bundle folder). */
export function endIdleSupervisors(cli: string): void {
  const needle = `${path.join(path.dirname(cli), 'supervisor.js')}\0idle`;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) process.kill(Number(name), 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
}

/** VmRSS and VmHWM of a process, in MiB. */
export function residentMiB(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** A folder with a `git` that appends `<ns since epoch> <args>` to `log`, then runs the real git. */
export function countingGit(log: string): string {
  const dir = remember(benchDir('caesar-bench-git-'));
  const real = ['/usr/bin/git', '/usr/local/bin/git', '/bin/git'].find((g) => existsSync(g)) ?? 'git';
  writeFileSync(path.join(dir, 'git'), `#!/bin/sh\nprintf '%s %s\\n' "$(date +%s%N)" "$*" >> '${log}'\nexec ${real} "$@"\n`, { mode: 0o755 });
  return dir;
}

/** Of the logged git calls, how many in all and how many at or after `endedNs` (the agent's last instruction). */
export function gitCalls(log: string, endedNs: bigint): { total: number; afterAgent: number; commands: string[] } {
  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const after = lines.filter((l) => BigInt(l.slice(0, l.indexOf(' '))) >= endedNs);
  return { total: lines.length, afterAgent: after.length, commands: after.map(subcommand) };
}

/** A logged call without its safety options and repository paths: the subcommand and its first arguments. */
function subcommand(line: string): string {
  const words = line.split(' ').slice(1);
  const at = words.findIndex((w, i) => !w.startsWith('-') && words[i - 1] !== '-c');
  return words.slice(at, at + 3).join(' ');
}

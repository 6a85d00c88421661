import { promises as fs } from 'node:fs';
import { plural } from '../../common/format';
import { taskLifecycle } from '../../common/lifecycle';
import { cliAdvice, nextActions } from '../../common/next-actions';
import * as path from 'node:path';
import type { Command } from 'commander';
import { ISOLATIONS, LAUNCHER_KINDS, MODES, NETWORK_REQUESTS, TRANSPORTS, type IsolationRequest, type LauncherKind, type ModeName, type NetworkRequest, type TransportName } from '../../config';
import { checkPassed, checksSuffix, type ProtocolEvent, type ResultDoc } from '../../protocol';
import { DelegationRefusedError, TaskStore, delegateTask, requestCancel, type DelegatedTask, type TaskSummary } from '../../engine/tasks';
import { describeEvent, formatUsage, shortId, styleFor, termSafe, type Style } from '../format';
import { EXIT, ExitCode, UsageError, printJson, type CliIo } from '../io';
import { resolveRoot } from '../root';
import { waitUntilSettled } from '../settle';

interface RunOptions {
  agent?: string;
  role?: string;
  mode?: string;
  isolation?: string;
  network?: string;
  model?: string;
  timeout?: string;
  context?: string;
  channel?: boolean;
  env?: string;
  transport?: string;
  launcher?: string;
  check?: string[];
  json?: boolean;
  root?: string;
}

/**
 * `caesar run <objective> [-- agent args…]`: resolve, delegate (the task gets its own detached supervisor), then
 * follow the task's events until it ends and print the outcome. Ctrl-C asks the supervisor to cancel and waits for it,
 * so no agent process is left behind. Exit 0 only when the process succeeded AND the report says success.
 */
export function registerRun(program: Command, io: CliIo): void {
  program
    .command('run')
    .description('Delegate a task to an agent and follow it until it ends (extra agent arguments go after --)')
    .argument('<objective>', 'what the agent must do (quote it)')
    .argument('[agentArgs...]', 'extra arguments for the agent CLI, after --')
    .option('--agent <id>', 'the agent to run (see `caesar agents list`)')
    .option('--role <name>', 'a configured role, which picks the agent and its defaults')
    .option('--mode <mode>', `read-only | write`)
    .option('--isolation <isolation>', 'auto | inplace | worktree')
    .option('--network <network>', 'auto | on | off')
    .option('--model <name>', 'model for agents that accept one')
    .option('--timeout <duration>', 'deadline, e.g. 90s, 10m (default from the policy: 10m)')
    .option('--context <text|@file>', 'context for the agent, inline or read from a file with @path')
    .option('--channel', 'offer the MCP return channel to agents that can load it')
    .option('--env <policy>', "the agent's environment: minimal (PATH, HOME, locale, its own keys, [policy] env_allow) or inherit; never looser than [policy] env")
    .option('--transport <transport>', "stream (the agent's own JSON stream) or acp (Agent Client Protocol: permission requests become questions); default from [transport]")
    .option('--launcher <kind>', 'where the supervisor runs: local, or slurm (a batch job; [launcher] sets its partition, time, cpus, mem)')
    .option('--check <command>', 'a shell command Caesar runs in the workspace after the agent ends; its failure fails `caesar run` (repeatable)', collect, [] as string[])
    .option('--json', 'print one JSON object with the outcome, nothing else on stdout')
    .option('--root <dir>', 'the caesar root (default: first ancestor holding .caesar/ or .git/)')
    .action(async (objective: string, agentArgs: string[], opts: RunOptions, command: Command) => {
      const extraArgs = extraArgsAfterDash(agentArgs, rawArgsOf(command));
      await run(io, objective, extraArgs, opts);
    });
}

/** Operands after the objective are accepted only after `--`: `caesar run fix the bug` is a quoting mistake. */
function extraArgsAfterDash(agentArgs: string[], rawArgs: string[]): string[] {
  if (!agentArgs.length) return [];
  const dash = rawArgs.indexOf('--');
  const afterDash = dash >= 0 ? rawArgs.slice(dash + 1) : [];
  if (afterDash.length < agentArgs.length || afterDash.slice(-agentArgs.length).join('\0') !== agentArgs.join('\0')) {
    const stray = agentArgs.find((a) => !afterDash.includes(a)) ?? agentArgs[0];
    throw new UsageError(`Unexpected argument "${stray}": quote the objective ("…"), and put arguments for the agent after --.`);
  }
  return agentArgs;
}

function rawArgsOf(command: Command): string[] {
  let top: Command = command;
  while (top.parent) top = top.parent;
  return ((top as unknown as { rawArgs?: string[] }).rawArgs ?? []).map(String);
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${flag} must be one of ${allowed.join(', ')} (got "${value}").`);
  return value as T;
}

async function readContext(io: CliIo, value: string | undefined): Promise<string | undefined> {
  if (value === undefined || !value.startsWith('@')) return value;
  const file = path.resolve(io.cwd, value.slice(1));
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--context ${value}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
}

async function run(io: CliIo, objective: string, extraArgs: string[], opts: RunOptions): Promise<void> {
  const mode = oneOf<ModeName>('--mode', opts.mode, MODES);
  const isolation = oneOf<IsolationRequest>('--isolation', opts.isolation, ISOLATIONS);
  const network = oneOf<NetworkRequest>('--network', opts.network, NETWORK_REQUESTS);
  const transport = oneOf<TransportName>('--transport', opts.transport, TRANSPORTS);
  const launcher = oneOf<LauncherKind>('--launcher', opts.launcher, LAUNCHER_KINDS);
  if (!objective.trim()) throw new UsageError('The objective is empty.');
  const root = resolveRoot(io.cwd, opts.root);
  const workspace = opts.root !== undefined ? root : path.resolve(io.cwd);
  const context = await readContext(io, opts.context);

  let delegated: DelegatedTask;
  try {
    delegated = await delegateTask(
      root,
      {
        objective,
        workspace,
        ...(opts.agent ? { agent: opts.agent } : {}),
        ...(opts.role ? { role: opts.role } : {}),
        ...(mode ? { mode } : {}),
        ...(isolation ? { isolation } : {}),
        ...(network ? { network } : {}),
        ...(transport ? { transport } : {}),
        ...(launcher ? { launcher } : {}),
        ...(opts.model ? { model: opts.model } : {}),
        ...(opts.timeout ? { timeout: opts.timeout } : {}),
        ...(context !== undefined ? { context } : {}),
        ...(opts.channel ? { channel: true } : {}),
        // Checked by the resolution (an unknown value is a usage error).
        ...(opts.env ? { env: opts.env as 'inherit' | 'minimal' } : {}),
        extra_args: extraArgs,
        ...(opts.check?.length ? { checks: opts.check } : {}),
      },
      { env: io.env, supervisorEnv: io.env },
    );
  } catch (err) {
    if (err instanceof DelegationRefusedError) throw new UsageError(err.message);
    throw err;
  }
  for (const warning of delegated.warnings) io.err(`caesar: warning: ${termSafe(warning)}`);

  const { id } = delegated;
  // The root the task was created under (inside a sandboxed task, the supervisor's, not a worktree's).
  const store = new TaskStore(delegated.root);
  const style = styleFor(io);
  if (!opts.json) io.err(`Task ${id} delegated to ${delegated.launch.agent}; following it (Ctrl-C cancels).`);
  // A fatal error reaches the user as an error event, then again inside the finished summary, state.error and the
  // report summary: it is printed the first time only.
  const shownErrors: string[] = [];
  const settled = await follow(
    io,
    store,
    id,
    opts.json
      ? undefined
      : (event) => {
          io.out(eventLine(withoutShownErrors(event, shownErrors), style));
          if (event.type === 'error') shownErrors.push(event.message.trim());
        },
  );
  await printOutcome(io, store, id, settled, opts, style, shownErrors);
}

/** The event with the error texts already shown taken out of a finished event's summary. */
function withoutShownErrors(event: ProtocolEvent, shownErrors: readonly string[]): ProtocolEvent {
  if (event.type !== 'finished' || !event.summary) return event;
  const summary = withoutTexts(event.summary, shownErrors);
  return summary === event.summary ? event : { ...event, summary };
}

function withoutTexts(text: string, texts: readonly string[]): string {
  let left = text;
  for (const t of texts) if (t) left = left.split(t).join('');
  return left.replace(/\s{2,}/g, ' ').trim();
}

/**
 * Follows the task's events (byte offsets + fs.watch) until it is settled and its `finished` event has been seen.
 * Ctrl-C (or io.abort) files a cancel request once and keeps waiting: the supervisor ends the agent's whole group.
 */
async function follow(io: CliIo, store: TaskStore, id: string, onEvent?: (event: ProtocolEvent) => void): Promise<TaskSummary> {
  let sawFinished = false;
  let resolveFinished: () => void = () => {};
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));
  const subscription = store.follow(
    id,
    0,
    (events) => {
      for (const event of events) {
        onEvent?.(event);
        if (event.type === 'finished') {
          sawFinished = true;
          resolveFinished();
        }
      }
    },
    (_line, error) => io.err(`caesar: unreadable event line skipped: ${termSafe(error)}`),
  );
  let cancelRequested = false;
  let cancelling: Promise<unknown> | undefined;
  const stopWaiting = new AbortController();
  const cancel = () => {
    if (cancelRequested) {
      // A second Ctrl-C: stop waiting. The request stays filed; the detached supervisor still stops the agent.
      stopWaiting.abort();
      return;
    }
    cancelRequested = true;
    io.err(`caesar: cancelling ${shortId(id)}… (waiting for the agent to stop)`);
    cancelling = requestCancel(store.root, id, 'cli').catch((err: Error) => io.err(`caesar: cancel failed: ${err.message}`));
  };
  process.on('SIGINT', cancel);
  io.abort?.addEventListener('abort', cancel, { once: true });
  if (io.abort?.aborted) cancel();
  // The `finished` event is written last, after result.json and the final state (finalize.ts): once the follower
  // has read it, the summary is final and the CLI ends at once. The state watch stays for the task whose supervisor
  // dies (lost: no `finished` ever comes) and for Ctrl-C.
  const stopWatching = new AbortController();
  const stop = () => stopWatching.abort();
  stopWaiting.signal.addEventListener('abort', stop, { once: true });
  try {
    const settled = await Promise.race([waitUntilSettled(store, id, stopWatching.signal), finished.then(() => 'finished' as const)]);
    if (settled === 'finished') {
      const summary = await store.summary(id);
      if (summary) return summary;
      throw new Error(`Task "${id}" disappeared (its directory was removed).`);
    }
    if (!settled) throw new ExitCode(130, `Stopped waiting for ${id}; its cancel request stays filed (see \`caesar ps\`).`);
    if (settled.observed !== 'lost' && !sawFinished) {
      // The supervisor writes the final state, then the finished event: give the follower a moment to read it. The
      // timer must keep the process alive (no unref): file watchers may not, and an empty event loop would end the
      // CLI here, exit code 0 and nothing printed.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([finished, new Promise((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
    }
    return (await store.summary(id)) ?? settled;
  } finally {
    stop();
    stopWaiting.signal.removeEventListener('abort', stop);
    process.off('SIGINT', cancel);
    io.abort?.removeEventListener('abort', cancel);
    subscription.dispose();
    // The request must be on disk before this returns: the process may end right after (src/bin/caesar.ts).
    await cancelling;
  }
}

const GLYPHS: Record<ProtocolEvent['type'], [string, string]> = {
  started: ['▶', 'started'],
  thinking: ['…', 'thinking'],
  message: ['»', 'message'],
  tool_use: ['▸', 'tool'],
  file_changed: ['±', 'file'],
  progress: ['%', 'progress'],
  question: ['?', 'question'],
  answer: ['←', 'answer'],
  error: ['⚠', 'error'],
  finished: ['■', 'finished'],
};

/** One line per event: glyph + label + text on a TTY, a plain `[label] text` elsewhere. */
export function eventLine(event: ProtocolEvent, style: Style): string {
  const [glyph, label] = GLYPHS[event.type];
  let text = describeEvent(event);
  if (event.type === 'tool_use') {
    const mark = event.status === 'succeeded' ? '✓' : event.status === 'failed' ? '✗' : glyph;
    const what = termSafe([event.tool, event.input_summary].filter(Boolean).join(' ') || '(tool)');
    if (!style.enabled) return `[tool ${event.status}] ${what}`;
    const line = `${mark} ${what}`;
    return event.status === 'failed' ? style.red(line) : event.status === 'succeeded' ? style.dim(line) : style.cyan(line);
  }
  if (event.type === 'question') text += ` — answer with: caesar answer ${event.task_id} ${event.id} <text>`;
  if (!style.enabled) return `[${label}] ${text}`;
  const line = `${glyph} ${style.bold(label)} ${text}`;
  return event.type === 'error' ? style.red(line) : event.type === 'question' ? style.yellow(line) : line;
}

async function printOutcome(
  io: CliIo,
  store: TaskStore,
  id: string,
  settled: TaskSummary,
  opts: RunOptions,
  style: Style,
  shownErrors: readonly string[] = [],
): Promise<void> {
  const result = settled.result;
  const status = settled.observed;
  // A record Caesar did not write is left out of the outcome (record-seal.ts); say which, and why.
  for (const why of settled.unverified) io.err(`caesar: ${termSafe(why)}`);
  const checksFailed = (settled.state.checks?.failed ?? 0) > 0;
  const succeeded = status === 'succeeded' && result?.report.status === 'success' && !checksFailed;
  if (opts.json) {
    printJson(io, {
      task_id: id,
      status,
      report: result?.report ?? null,
      report_source: result?.report_source ?? null,
      changes_verified_by: result?.changes_verified_by ?? null,
      usage: result?.usage ?? settled.state.usage ?? null,
      diff: result?.diff ?? null,
      checks: result?.checks ?? [],
      checks_failed: checksFailed,
      ...(settled.state.error ? { error: settled.state.error } : {}),
    });
  } else {
    const lines: string[] = [''];
    const verdict = succeeded ? style.green('✓') : style.red('✗');
    lines.push(
      `${style.enabled ? `${verdict} ` : ''}Task ${id}: ${status}${checksSuffix(settled.state)}${result ? ` — report ${result.report.status} (source ${result.report_source}, changes verified by ${result.changes_verified_by})` : ''}`,
    );
    const error = settled.state.error?.trim();
    // Everything below but the verdict is the agent's text: terminal-safe (termSafe) line by line.
    if (error && !shownErrors.includes(error)) lines.push(`Error: ${termSafe(error)}`);
    if (status === 'lost') lines.push('Its supervisor died without concluding; the worktree, if any, is kept for review.');
    if (result) {
      const summary = withoutTexts(result.report.summary, error ? [...shownErrors, error] : shownErrors);
      if (summary) lines.push(`Summary: ${termSafe(summary)}`);
      const usage = formatUsage(result.usage);
      if (usage) lines.push(`Usage: ${usage}`);
      const files = result.diff?.files ?? [];
      if (result.diff) {
        const total = result.diff.files_total ?? files.length;
        lines.push(files.length ? `${plural(total, 'file')} changed (${result.changes_verified_by === 'git' ? 'according to git' : 'as declared'}):` : 'No file changed according to git.');
        for (const f of files.slice(0, MAX_FILES_SHOWN)) lines.push(termSafe(`  ${f.action.padEnd(8)} ${f.old_path ? `${f.old_path} → ` : ''}${f.path}  ${f.too_large ? 'too large to show' : f.binary ? 'binary' : `+${f.additions} -${f.deletions}`}`));
        lines.push(...andMore(total, Math.min(files.length, MAX_FILES_SHOWN), settled.state.worktree ? `caesar diff ${id} --stat --all lists them all` : ''));
      } else if (result.report.changes.length) {
        lines.push('Files changed (declared by the agent, not verified: no git):');
        for (const c of result.report.changes.slice(0, MAX_FILES_SHOWN)) lines.push(termSafe(`  ${c.action.padEnd(8)} ${c.path}`));
        lines.push(...andMore(result.changes_total ?? result.report.changes.length, Math.min(result.report.changes.length, MAX_FILES_SHOWN), ''));
      }
      lines.push(...checkLines(result, style));
      if (result.report.findings.length) {
        lines.push(`Findings (${result.findings_total ?? result.report.findings.length}):`);
        for (const f of result.report.findings) lines.push(termSafe(`  [${f.severity}] ${f.title}${f.file ? ` — ${f.file}` : ''}${f.detail ? `: ${f.detail}` : ''}`));
        lines.push(...andMore(result.findings_total ?? result.report.findings.length, result.report.findings.length, ''));
      }
    }
    // What is left to do, from the one lifecycle the editor and the MCP server read too (src/common/next-actions.ts).
    const advice = cliAdvice(nextActions(taskLifecycle(settled)), id);
    if (advice) lines.push(advice);
    io.out(lines.join('\n'));
  }
  if (!succeeded) throw new ExitCode(EXIT.failure);
}

/**
 * What Caesar observed running the checks, beside what the agent says it ran (`commands_run`: its claim). A check's
 * output tail is the task's text: terminal-safe.
 */
function checkLines(result: ResultDoc, style: Style): string[] {
  const lines: string[] = [];
  const claimed = result.report.commands_run;
  if (claimed.length) {
    lines.push("Commands the agent says it ran (its claim):");
    for (const c of claimed) lines.push(termSafe(`  ${c.command}${c.exit_code !== undefined && c.exit_code !== null ? `  → exit ${c.exit_code}` : ''}`));
  }
  if (!result.checks?.length) return lines;
  lines.push('Checks Caesar ran itself (observed):');
  for (const check of result.checks) {
    const passed = checkPassed(check);
    const mark = passed ? style.green('passed') : style.red('FAILED');
    lines.push(termSafe(`  ${mark} ${check.name}: ${check.command}  (${check.error ?? `exit ${check.exit_code}`}, ${check.duration_ms} ms)`));
    if (!passed && check.output_tail.trim()) for (const line of check.output_tail.trimEnd().split('\n').slice(-10)) lines.push(termSafe(`      ${line}`));
  }
  return lines;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Files listed after a task: past this, a count (the whole list is one `caesar diff --stat --all` away). */
const MAX_FILES_SHOWN = 100;

/** "… and N more" when `shown` of `total` were listed, with where to see the rest. */
function andMore(total: number, shown: number, where: string): string[] {
  return total > shown ? [`  … and ${(total - shown).toLocaleString('en-US')} more${where ? ` (${where})` : ''}`] : [];
}

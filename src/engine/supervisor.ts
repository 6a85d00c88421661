import { existsSync, promises as fs, watch, type FSWatcher } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import {
  DOCUMENT_IDS,
  ENV,
  PROTOCOL_VERSION,
  parseReport,
  parseTask,
  parseTaskDir,
  renderBrief,
  strictReportSchema,
  taskPaths,
  type EventDraft,
  type Finding,
  type Report,
  type ReportTier,
  type Task,
  type TaskPaths,
  type Usage,
} from '../protocol';
import { resolveAdapter } from '../agents/registry';
import type { AgentAdapter, SpawnPlan, TranslationSummary } from '../agents/types';
import { ToolPairing } from '../agents/stream';
import { AgentOutbox } from './agent-outbox';
import { readJsonFile, writeFileAtomic, writeJsonAtomic } from './atomic';
import { channelCoordinates, channelLauncher } from './channel-launcher';
import { minimalEnv } from './agent-env';
import { EventsWriter } from './events-writer';
import { repoState, type RepoState } from './git';
import { DEFAULT_MAX_PARALLEL, readLaunchSpec, type LaunchSpec } from './launch';
import { QuestionsRelay } from './questions-relay';
import { inplaceDiff, reconcileReport, takeSnapshot, worktreeDiff, type DiffResult, type Snapshot } from './reconcile';
import { resolveReport, synthesize, type ProcessOutcome } from './report';
import type { ResultDoc } from './result';
import { SlotWaitAborted, acquireSlot, type Slot } from './slots';
import { runAgentProcess, type RunAgentResult } from './spawn';
import { ACTIVE_STATUSES, TaskStateSchema, type ReportSource, type TaskState, type TaskStatus } from './state';
import { detectWorkshop, materialize, workshopFinding } from './workshop';
import { createWorktree, worktreeIgnoreFinding } from './worktree';
import { acquireWorkspaceWriter, type WriterLease } from './writer-lock';

export interface SuperviseOptions {
  /** SIGTERM → SIGKILL grace for the agent's process group. Default $CAESAR_KILL_GRACE_MS or 5 s. */
  graceMs?: number;
  /** Safety re-check period of the slot wait (wake-ups normally come from fs.watch). */
  slotSafetyMs?: number;
  log?: (message: string) => void;
}

export const DEFAULT_GRACE_MS = 5000;

/** Where the agent works and what the orchestrator laid down there. */
interface Placement {
  isolation: 'inplace' | 'worktree';
  /** The agent's cwd / task.workspace: the worktree (mapped to the same subfolder) or the user's workspace. */
  workspace: string;
  gitRoot?: string;
  worktree?: { path: string; branch: string; base_ref: string };
  /** Repository-relative paths excluded from the diff with prefix semantics. */
  excluded: string[];
  /** The workspace's folder relative to its repository root ('' at the root). */
  prefix: string;
  snapshot?: Snapshot;
  findings: Finding[];
}

/**
 * The task's supervisor (`caesar supervise <taskDir>`, detached): the ONLY writer of state.json after delegate()
 * and of events.jsonl. It waits for a slot, prepares the isolation, runs the agent in its own process group, turns
 * requests (cancel.request, questions/answers) into events, picks the report tier, reconciles with git, writes
 * result.json and the final state, then the single `finished` event. Whatever goes wrong once the task directory
 * exists ends in a final state with an error and a `finished` event — never a silent death.
 */
export async function superviseTask(taskDir: string, options: SuperviseOptions = {}): Promise<TaskState> {
  const { root, id } = parseTaskDir(taskDir);
  const paths = taskPaths(root, id);
  const log = options.log ?? ((message: string) => process.stderr.write(`[${new Date().toISOString()}] ${message}\n`));
  const initial = await readJsonFile(paths.state, TaskStateSchema);
  if (!initial) throw new Error(`No state.json in ${paths.dir}: not a task created by delegate().`);
  if (!ACTIVE_STATUSES.includes(initial.status) || (initial.supervisor_pid !== undefined && initial.supervisor_pid !== process.pid)) {
    throw new Error(`Task ${id} is already ${initial.status === 'pending' || initial.status === 'running' ? 'supervised' : initial.status}; nothing to do.`);
  }
  const run = new TaskRun(paths, id, initial, options, log);
  return run.execute();
}

class TaskRun {
  private readonly state: StateWriter;
  private readonly events: EventsWriter;
  private readonly cancel: CancelWatch;
  private readonly questions: QuestionsRelay;
  /** Every agent-produced draft (translated stdout, the OACP outbox) goes through this one pairing step. */
  private readonly pairing = new ToolPairing();
  private readonly outbox: AgentOutbox;
  private readonly graceMs: number;
  private slot?: Slot;
  private writerLease?: WriterLease;
  private launch?: LaunchSpec;
  private placement?: Placement;

  constructor(
    private readonly paths: TaskPaths,
    private readonly id: string,
    initial: TaskState,
    private readonly options: SuperviseOptions,
    private readonly log: (message: string) => void,
  ) {
    this.state = new StateWriter(paths.state, initial);
    this.events = new EventsWriter(paths.events, id, (reason) => log(reason));
    this.cancel = new CancelWatch(paths.cancelRequest, log);
    this.questions = new QuestionsRelay(paths, this.events, log);
    this.outbox = new AgentOutbox(paths.agentEvents, (drafts) => this.relay(drafts), log);
    const envGrace = Number(process.env.CAESAR_KILL_GRACE_MS);
    this.graceMs = options.graceMs ?? (Number.isFinite(envGrace) && envGrace >= 0 ? envGrace : DEFAULT_GRACE_MS);
  }

  async execute(): Promise<TaskState> {
    try {
      await this.state.update({ supervisor_pid: process.pid, supervisor_host: hostname(), phase: 'starting' });
      this.launch = await readLaunchSpec(this.paths.root, this.id);
      const launch = this.launch;
      const adapter = resolveAdapter(launch.agent, launch.generic_agent ? [launch.generic_agent] : []);
      this.slot = await acquireSlot({
        root: this.paths.root,
        limit: launch.max_parallel ?? DEFAULT_MAX_PARALLEL,
        label: this.id,
        signal: this.cancel.signal,
        safetyIntervalMs: this.options.slotSafetyMs,
        onWait: (ahead) => void this.state.update({ phase: `waiting for a slot (${ahead} ahead)` }),
      });
      if (this.cancel.signal.aborted) return await this.concludeWithoutRun('cancelled', 'Task cancelled before the agent started.');
      await this.state.update({ phase: 'preparing the workspace' });
      this.placement = await this.prepare(launch, adapter);
      if (this.cancel.signal.aborted) return await this.concludeWithoutRun('cancelled', 'Task cancelled before the agent started.');
      return await this.runAgent(launch, adapter, this.placement);
    } catch (err) {
      const cancelled = err instanceof SlotWaitAborted || this.cancel.signal.aborted;
      const message = cancelled ? 'Task cancelled before the agent started.' : describeError(err);
      if (!cancelled) this.log(`task failed: ${(err as Error)?.stack ?? message}`);
      return await this.concludeWithoutRun(cancelled ? 'cancelled' : 'failed', message).catch((final: unknown) => {
        this.log(`could not even record the failure: ${describeError(final)}`);
        throw final;
      });
    } finally {
      this.cancel.dispose();
      this.questions.dispose();
      this.outbox.dispose();
      this.events.close();
      // Normally done by finalize() already; here for the paths that never reach it (a failure to record the failure).
      await this.releaseResources();
    }
  }

  /**
   * The agent's drafts into events.jsonl: tool calls paired (id-less ones given a synthetic id), so the log always
   * carries paired ids and readers only look them up. `started` is the supervisor's own event (exactly one, first).
   */
  private relay(drafts: EventDraft[]): void {
    const paired: EventDraft[] = [];
    for (const draft of drafts) if (draft.type !== 'started') paired.push(...this.pairing.pair(draft));
    this.events.appendAll(paired);
  }

  /**
   * Gives back the in-place writer lease and the slot. finalize() calls it BEFORE it publishes the final state, so
   * the contract observers rely on is: a task seen in a final state (state.json or the `finished` event) holds no
   * lease and no slot any more. Idempotent: each resource is released once.
   */
  private async releaseResources(): Promise<void> {
    const lease = this.writerLease;
    const slot = this.slot;
    this.writerLease = undefined;
    this.slot = undefined;
    await lease?.release().catch((err: unknown) => this.log(`releasing the in-place writer lease: ${describeError(err)}`));
    await slot?.release().catch((err: unknown) => this.log(`releasing the slot: ${describeError(err)}`));
  }

  /** Isolation (reference §2.3, inside the slot: §8.12 fixed), worktree + workshop, or the in-place snapshot. */
  private async prepare(launch: LaunchSpec, adapter: AgentAdapter): Promise<Placement> {
    const repo = await repoState(launch.workspace);
    const decision = decideIsolation(launch, adapter, repo);
    const findings = [...decision.findings];
    const gitRoot = repo.kind === 'usable' ? repo.gitRoot : undefined;
    const prefix = gitRoot ? toPosix(path.relative(gitRoot, await fs.realpath(launch.workspace))) : '';
    if (decision.isolation === 'inplace' && launch.mode === 'write') {
      this.writerLease = await acquireWorkspaceWriter(this.paths.root, launch.workspace, this.id);
    }
    if (decision.isolation === 'inplace') {
      const snapshot = gitRoot ? await takeSnapshot(launch.workspace) : undefined;
      return { isolation: 'inplace', workspace: launch.workspace, gitRoot, excluded: [], prefix, snapshot, findings };
    }
    await this.state.update({ phase: 'creating the worktree' });
    // Recording the caesar root lets gc run from another root of the same repository tell this worktree from an orphan.
    const worktree = await createWorktree({ gitRoot: gitRoot!, id: this.id, root: this.paths.root });
    await this.state.update({ isolation: 'worktree', worktree: worktree.path, branch: worktree.branch, base_ref: worktree.base_ref });
    const setup = launch.worktree_setup;
    if (!setup.copy.length && !setup.link.length) {
      const suggestion = await detectWorkshop(launch.workspace).catch(() => undefined);
      if (suggestion) findings.push(workshopFinding(suggestion));
    }
    const ignoreFinding = await worktreeIgnoreFinding(gitRoot!, this.id).catch(() => undefined);
    if (ignoreFinding) findings.push(ignoreFinding);
    let excluded: string[] = [];
    if (setup.copy.length || setup.link.length || setup.setup.length) {
      await this.state.update({ phase: setup.setup.length ? 'setting up the worktree' : 'laying down the workshop' });
      const placed = await materialize({
        workspace: launch.workspace,
        worktree: worktree.path,
        copy: setup.copy,
        link: setup.link,
        setup: setup.setup,
        signal: this.cancel.signal,
      });
      excluded = placed.excluded_paths;
      findings.push(...placed.findings);
      await this.state.update({ excluded_paths: excluded });
    }
    return {
      isolation: 'worktree',
      workspace: prefix ? path.join(worktree.path, prefix) : worktree.path,
      gitRoot,
      worktree,
      excluded,
      prefix,
      findings,
    };
  }

  private async runAgent(launch: LaunchSpec, adapter: AgentAdapter, placement: Placement): Promise<TaskState> {
    const tier = pickTier(launch, adapter);
    const task = buildTask(launch, placement, this.paths);
    await writeJsonAtomic(this.paths.task, task);
    const prompt = renderBrief(task, tier);
    await writeFileAtomic(this.paths.brief, prompt);
    if (tier === 'schema') await writeJsonAtomic(this.paths.reportSchema, strictReportSchema());
    const plan = adapter.build({
      task,
      taskDir: this.paths.dir,
      prompt,
      promptFile: this.paths.brief,
      tier,
      ...(launch.model ? { model: launch.model } : {}),
      extraArgs: launch.extra_args,
      reportSchemaFile: this.paths.reportSchema,
      finalMessageFile: this.paths.finalMessage,
    });
    const restore = await layDownFiles(plan);
    await this.questions.start();
    await this.outbox.start();
    const translator = adapter.createTranslator({ workspace: placement.workspace });
    await this.state.update({ status: 'running', started_at: new Date().toISOString(), isolation: placement.isolation, phase: undefined });
    this.events.append({ type: 'started', agent: launch.agent, command: plan.display });

    let result: RunAgentResult;
    try {
      result = await runAgentProcess({
        plan,
        env: agentEnv(plan, this.paths, this.id, launch, adapter.envKeys ?? []),
        rawLogPath: this.paths.rawLog,
        timeoutMs: launch.timeout_ms,
        graceMs: this.graceMs,
        signal: this.cancel.signal,
        onPid: (pid) => void this.state.update({ agent_pid: pid }),
        onStdoutLines: (lines) => {
          const drafts: EventDraft[] = [];
          for (const line of lines) {
            try {
              drafts.push(...translator.line(line));
            } catch (err) {
              this.log(`translator threw on a line (kept in raw.log): ${describeError(err)}`);
            }
          }
          this.relay(drafts);
        },
        onTerminate: (reason) => {
          this.events.append(
            reason === 'timeout'
              ? { type: 'error', message: `Timeout exceeded (${launch.timeout_ms} ms).`, fatal: true }
              : { type: 'error', message: 'Task cancelled before execution finished.', fatal: true },
          );
        },
      });
    } finally {
      await restore();
    }
    // Everything the agent put in its outbox reaches events.jsonl before the conclusion (and its `finished`).
    await this.outbox.drain();
    if (result.spawnError) this.events.append({ type: 'error', message: result.spawnError, fatal: true });
    await this.questions.expireUnanswered();
    let translation: TranslationSummary = {};
    try {
      translation = translator.end(result.exitCode);
    } catch (err) {
      this.log(`translator end() threw: ${describeError(err)}`);
    }
    return this.conclude(launch, placement, result, translation, tier, plan);
  }

  private async conclude(
    launch: LaunchSpec,
    placement: Placement,
    run: RunAgentResult,
    translation: TranslationSummary,
    tier: ReportTier,
    plan: SpawnPlan,
  ): Promise<TaskState> {
    await this.state.update({ phase: 'reading the report' });
    const held = this.events.translatorFinished;
    const nativeFailure = translation.nativeFailure ?? (held?.status === 'failed' ? held.summary || 'the agent reported a failure' : undefined);
    const outcome: ProcessOutcome = {
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      cancelled: run.cancelled,
      ...(run.spawnError ? { spawnError: run.spawnError } : {}),
      ...(nativeFailure ? { nativeFailure } : {}),
    };
    let diff: DiffResult | undefined;
    const diffFindings: Finding[] = [];
    const excluded = excludedFor(placement, plan);
    if (excluded.length) {
      // apply and gc recompute the diff long after this process is gone: they must exclude exactly what we excluded.
      await this.state.update({ excluded_paths: excluded });
    }
    try {
      diff = await computeDiff(placement, excluded);
    } catch (err) {
      diffFindings.push({ severity: 'high', title: 'Diff could not be computed', detail: `${describeError(err)}. The agent's declared changes could not be verified.` });
    }
    const resolved = await resolveReport({
      taskId: this.id,
      tier,
      channel: tier === 'channel',
      paths: this.paths,
      translation: held?.summary && !translation.finalText ? { ...translation, finalText: held.summary } : translation,
      outcome,
      ...(diff ? { diffFiles: diff.files } : {}),
    });
    const reconciled = reconcileReport(resolved.report, diff, launch.mode, {
      roots: [placement.worktree?.path, placement.gitRoot].filter((r): r is string => Boolean(r)),
      prefix: placement.prefix,
    });
    const report: Report = {
      ...reconciled.report,
      findings: [...reconciled.report.findings, ...resolved.findings, ...diffFindings, ...placement.findings, ...launch.findings],
    };
    const usage = mergeUsage(report.usage, translation.usage, run.durationMs);
    const status: TaskStatus = run.cancelled
      ? 'cancelled'
      : run.timedOut
        ? 'timed_out'
        : run.exitCode === 0 && !run.spawnError && !nativeFailure
          ? 'succeeded'
          : 'failed';
    return this.finalize({
      status,
      report,
      source: resolved.source,
      verifiedBy: reconciled.changes_verified_by,
      agentReportValid: resolved.agent_report_valid,
      ...(resolved.agent_report_error ? { agentReportError: resolved.agent_report_error } : {}),
      usage,
      ...(diff ? { diff } : {}),
      exitCode: run.exitCode,
      signal: run.signal,
      ...(run.spawnError ? { error: run.spawnError } : {}),
    });
  }

  /** The agent never ran (cancel while queued, worktree impossible, setup failed…): a synthesized failed report. */
  private async concludeWithoutRun(status: 'failed' | 'cancelled', message: string): Promise<TaskState> {
    if (status === 'failed') this.events.append({ type: 'error', message, fatal: true });
    const report = synthesize(
      { taskId: this.id, translation: {}, outcome: { exitCode: null, timedOut: false, cancelled: status === 'cancelled', ...(status === 'failed' ? { spawnError: message } : {}) } },
      [],
    );
    const findings = [...(this.placement?.findings ?? []), ...(this.launch?.findings ?? [])];
    return this.finalize({
      status,
      report: { ...report, summary: status === 'cancelled' ? message : report.summary, findings },
      source: 'synthesized',
      verifiedBy: 'declaration',
      agentReportValid: false,
      exitCode: null,
      signal: null,
      ...(status === 'failed' ? { error: message } : {}),
    });
  }

  /**
   * result.json, then the lease and slot given back, then the final state, then the single `finished` event: a
   * follower that sees the final state or `finished` finds everything written and every resource released.
   */
  private async finalize(final: {
    status: TaskStatus;
    report: Report;
    source: ReportSource;
    verifiedBy: 'git' | 'declaration';
    agentReportValid: boolean;
    agentReportError?: string;
    usage?: Usage;
    diff?: DiffResult;
    exitCode: number | null;
    signal: string | null;
    error?: string;
  }): Promise<TaskState> {
    const report = parseReport({ ...final.report, ...(final.usage ? { usage: final.usage } : {}) });
    const result: ResultDoc = {
      report,
      report_source: final.source,
      changes_verified_by: final.verifiedBy,
      agent_report_valid: final.agentReportValid,
      ...(final.agentReportError ? { agent_report_error: final.agentReportError } : {}),
      ...(final.usage ? { usage: final.usage } : {}),
      ...(final.diff ? { diff: { files: final.diff.files, is_empty: final.diff.is_empty } } : {}),
    };
    await writeJsonAtomic(this.paths.result, result);
    // Taken before the slot is given back, so a task that waited for this slot always starts after this one ended.
    const endedAt = new Date().toISOString();
    await this.releaseResources();
    const state = await this.state.update({
      status: final.status,
      ended_at: endedAt,
      exit_code: final.exitCode,
      signal: final.signal,
      report_status: report.status,
      report_source: final.source,
      changes_verified_by: final.verifiedBy,
      ...(final.usage ? { usage: final.usage } : {}),
      ...(final.error ? { error: final.error } : {}),
      phase: undefined,
      agent_pid: undefined,
    });
    this.events.finish({ type: 'finished', status: report.status, summary: report.summary, exit_code: final.exitCode });
    return state;
  }
}

/** Reference §2.3 — the isolation actually used, with the findings the decision implies. */
export function decideIsolation(
  launch: Pick<LaunchSpec, 'isolation' | 'mode' | 'allow_inplace_write'>,
  adapter: Pick<AgentAdapter, 'capabilities' | 'displayName'>,
  repo: RepoState,
): { isolation: 'inplace' | 'worktree'; findings: Finding[] } {
  const usable = repo.kind === 'usable';
  const requested = launch.isolation;
  const unusable = repo.kind === 'usable' ? '' : `${repo.message} ${repo.remedy}`;
  if (requested === 'worktree' && !usable) throw new Error(`Worktree isolation is impossible: ${unusable}`);
  if (launch.mode === 'read-only' && !adapter.capabilities.nativeReadOnly) {
    if (usable) {
      const findings: Finding[] =
        requested === 'inplace'
          ? [{ severity: 'low', title: 'Degraded isolation', detail: `In-place was requested, but ${adapter.displayName} has no native read-only mode: the read-only task ran in a worktree instead, so nothing could touch your checkout.` }]
          : [];
      return { isolation: 'worktree', findings };
    }
    return {
      isolation: 'inplace',
      findings: [{ severity: 'low', title: 'Read-only not guaranteed', detail: `${adapter.displayName} has no native read-only mode and no worktree was possible, so the read-only constraint rests on the agent's word. ${unusable}` }],
    };
  }
  if (requested === 'worktree') return { isolation: 'worktree', findings: [] };
  // The same rule resolveDelegation applies before a task exists; here it guards launches that did not go through it.
  const allowInPlace =
    'To let agents edit your files directly: `caesar policy set allow_inplace_write true` (sets allow_inplace_write in [policy] of .caesar/config.toml).';
  if (requested === 'inplace') {
    if (launch.mode === 'write' && !launch.allow_inplace_write) {
      throw new Error(`Writing in place is refused: the policy does not allow in-place writes (allow_inplace_write = false). Use isolation "worktree" or "auto". ${allowInPlace}`);
    }
    return { isolation: 'inplace', findings: [] };
  }
  if (launch.mode === 'write') {
    if (usable) return { isolation: 'worktree', findings: [] };
    if (!launch.allow_inplace_write) {
      throw new Error(`Writing in place is refused: no worktree is possible and the policy does not allow in-place writes (allow_inplace_write = false). ${unusable} ${allowInPlace}`);
    }
    return { isolation: 'inplace', findings: [{ severity: 'low', title: 'Degraded isolation', detail: `The agent wrote directly in your workspace: no worktree was possible. ${unusable}` }] };
  }
  return { isolation: 'inplace', findings: [] };
}

/** Channel > schema > file (reference §2.2.8): the channel when the task asked for it and the agent can load it. */
export function pickTier(launch: Pick<LaunchSpec, 'channel'>, adapter: Pick<AgentAdapter, 'capabilities'>): ReportTier {
  if (launch.channel && adapter.capabilities.channel && channelAvailable()) return 'channel';
  return adapter.capabilities.schemaTier ? 'schema' : 'file';
}

/** The channel server can be started (Node and dist/caesar.js found); otherwise the task runs on a lower tier. */
function channelAvailable(): boolean {
  return channelLauncher() !== undefined;
}

function buildTask(launch: LaunchSpec, placement: Placement, paths: TaskPaths): Task {
  return parseTask({
    protocol: DOCUMENT_IDS.task,
    id: launch.id,
    created_at: launch.created_at,
    ...(launch.role ? { role: launch.role } : {}),
    agent: launch.agent,
    objective: launch.objective,
    context: launch.context,
    constraints: launch.constraints,
    acceptance_criteria: launch.acceptance_criteria,
    mode: launch.mode,
    isolation: placement.isolation,
    network: launch.network,
    workspace: placement.workspace,
    ...(placement.worktree ? { base_ref: placement.worktree.base_ref } : {}),
    deadline_ms: launch.timeout_ms,
    depth: launch.depth,
    report_path: paths.report,
    // The agent's outbox, not events.jsonl: that file has one writer, this supervisor, which relays the outbox.
    events_path: paths.agentEvents,
    // Requested → the coordinates, for every agent: adapters that can load MCP inject them (the `channel` tier), and
    // an OACP agent of its own (a [[agent]] template) may start the server from task.json itself.
    channel: launch.channel ? (channelCoordinates(paths.dir) ?? null) : null,
  });
}

/**
 * process.env (all of it under the `inherit` env policy; under `minimal` the base set, caesar's own variables, the
 * adapter's documented keys and the launch's allow list), then the eight CAESAR_* variables, then the adapter's own
 * (reference §1.1.4).
 */
function agentEnv(plan: SpawnPlan, paths: TaskPaths, id: string, launch: LaunchSpec, envKeys: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = launch.env_policy === 'minimal' ? minimalEnv(process.env, envKeys, launch.env_allow) : { ...process.env };
  // Set for the supervisor so an Electron host can run it; an agent CLI must not inherit it unless it asks.
  delete env.ELECTRON_RUN_AS_NODE;
  Object.assign(env, {
    [ENV.taskDir]: paths.dir,
    [ENV.taskFile]: paths.task,
    [ENV.reportPath]: paths.report,
    [ENV.eventsPath]: paths.agentEvents,
    [ENV.taskId]: id,
    [ENV.agent]: launch.agent,
    [ENV.depth]: String(launch.depth),
    [ENV.protocolVersion]: PROTOCOL_VERSION,
  });
  return { ...env, ...plan.env };
}

/** Writes the adapter's files before spawn; the returned function puts back what was there (best effort). */
async function layDownFiles(plan: SpawnPlan): Promise<() => Promise<void>> {
  const restores: Array<() => Promise<void>> = [];
  for (const file of plan.files ?? []) {
    const previous = file.restore ? await fs.readFile(file.path).catch(() => undefined) : undefined;
    await fs.mkdir(path.dirname(file.path), { recursive: true });
    await fs.writeFile(file.path, file.content);
    if (file.restore) restores.push(() => (previous === undefined ? fs.rm(file.path, { force: true }) : fs.writeFile(file.path, previous)));
  }
  return async () => {
    for (const restore of restores) await restore().catch(() => undefined);
  };
}

/** Workshop paths plus the files the adapter laid down itself (relative to the agent's workspace → repository-relative). */
function excludedFor(placement: Placement, plan: SpawnPlan): string[] {
  const own = (plan.excludeFromDiff ?? []).map((p) => (placement.prefix ? `${placement.prefix}/${toPosix(p)}` : toPosix(p)));
  return [...placement.excluded, ...own];
}

async function computeDiff(placement: Placement, excluded: string[]): Promise<DiffResult | undefined> {
  if (placement.worktree) return worktreeDiff(placement.worktree.path, placement.worktree.base_ref, excluded);
  if (placement.snapshot) return inplaceDiff(placement.workspace, placement.snapshot, excluded);
  return undefined;
}

function mergeUsage(fromReport: Usage | undefined, fromStream: Usage | undefined, durationMs: number): Usage {
  return { ...fromReport, ...fromStream, duration_ms: durationMs };
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * state.json's single writer: patches merge into the in-memory state and are written atomically, one at a time in
 * call order (an update never overtakes an earlier one).
 */
class StateWriter {
  private chain: Promise<unknown> = Promise.resolve();
  constructor(
    private readonly file: string,
    private current: TaskState,
  ) {}

  update(patch: Partial<TaskState>): Promise<TaskState> {
    const next = this.chain.then(async () => {
      const merged: Record<string, unknown> = { ...this.current, ...patch };
      for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
      this.current = TaskStateSchema.parse(merged);
      await writeJsonAtomic(this.file, this.current);
      return this.current;
    });
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/** Turns `cancel.request` (written by any process) into an abort signal; fs.watch on the task folder. */
class CancelWatch {
  private readonly controller = new AbortController();
  private watcher?: FSWatcher;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly file: string,
    private readonly log: (message: string) => void,
  ) {
    const name = path.basename(file);
    try {
      this.watcher = watch(path.dirname(file), (_event, changed) => {
        if (!changed || changed.toString() === name) this.check();
      });
      this.watcher.on('error', (err) => log(`watching for cancel requests: ${err.message}`));
    } catch (err) {
      log(`cannot watch for cancel requests: ${describeError(err)}`);
    }
    // Safety net for file systems whose watchers miss events; one stat every few seconds.
    this.timer = setInterval(() => this.check(), 3000);
    this.timer.unref();
    // A supervisor asked to stop (shutdown, logout) stops its agent's group the same way and records a cancel.
    for (const signal of STOP_SIGNALS) process.once(signal, this.onStopSignal);
    this.check();
  }

  private readonly onStopSignal = (signal: NodeJS.Signals): void => {
    this.log(`received ${signal}: cancelling the task`);
    this.controller.abort();
  };

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private check(): void {
    if (!this.controller.signal.aborted && existsSync(this.file)) this.controller.abort();
  }

  dispose(): void {
    this.watcher?.close();
    clearInterval(this.timer);
    for (const signal of STOP_SIGNALS) process.off(signal, this.onStopSignal);
  }
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT'];

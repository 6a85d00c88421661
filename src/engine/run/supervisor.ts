import { hostname } from 'node:os';
import {
  parseTaskDir,
  renderBrief,
  strictReportSchema,
  taskPaths,
  type EventDraft,
  type Finding,
  type ReportTier,
  type TaskPaths,
} from '../../protocol';
import { resolveAdapter } from '../../agents/registry';
import type { AgentAdapter, SpawnPlan, TranslationSummary, Translator } from '../../agents/types';
import { ToolPairing } from '../../agents/stream';
import { readVerifiedJsonFile } from '../store/sealed-read';
import { writeFileAtomic, writeJsonAtomic } from '../../base/atomic';
import { CancelWatch } from '../process/cancel-watch';
import { agentEnv } from '../sandbox/agent-env';
import { AgentOutbox } from './agent-outbox';
import { layDownFiles } from './lay-down';
import { EventsWriter } from './events-writer';
import { writeConclusion, type Conclusion } from './finalize';
import { preparePlacement, type Placement } from './isolation';
import { confineRun, guardCheckoutIfWritable } from './confinement';
import { buildTask, pickTier } from './task-document';
import { DEFAULT_MAX_PARALLEL, readLaunchSpec } from '../store/launch-spec';
import { checkPassed, type CheckResult, type LaunchSpec } from '../../protocol';
import { runChecks } from './checks';
import { QuestionsRelay } from './questions-relay';
import { concludeRun, synthesizedConclusion } from './run-conclusion';
import { SlotWaitAborted, acquireSlot, type Slot } from '../store/slots';
import { runAgentProcess, type RunAgentOptions, type RunAgentResult } from '../process/spawn';
import { AcpSession, acpTier } from '../acp/session';
import { ACTIVE_STATUSES, TaskStateSchema, type TaskState } from '../../protocol';
import { hiddenByPolicy, sandboxWillConfine, type PreparedSandbox } from '../sandbox/sandbox';
import { CAESAR_FOLDERS, moveAsidePlantedGit } from '../git/nested-git';
import { StateWriter } from './state-writer';
import { agentCannotBeSandboxed, decideTaskNetwork } from './task-network';
import type { NetworkDecision } from '../sandbox/sandbox';
import { WriteFault } from '../process/write-fault';
import { AFTER_RUN_PHASES, AfterRunWatchdog, PhaseTimeout, concludeBudgetMs, killOwnChildren, withinBudget, type AfterRunPhase } from '../process/phase-watchdog';
import type { WriterLease } from '../store/writer-lock';
import { delegatingParent, type DelegationOffer, type OfferDelegation } from './delegating-parent';

export interface SuperviseOptions {
  /** SIGTERM → SIGKILL grace for the agent's process group. Default $CAESAR_KILL_GRACE_MS or 5 s. */
  graceMs?: number;
  /** Safety re-check period of the slot wait (wake-ups normally come from fs.watch). */
  slotSafetyMs?: number;
  log?: (message: string) => void;
  /**
   * Offers a sandboxed agent the socket it delegates through (engine/tasks/delegation-server.ts, given by
   * engine/tasks/supervise.ts). Without it, an agent inside the sandbox cannot start sub-tasks.
   */
  offerDelegation?: OfferDelegation;
}

export const DEFAULT_GRACE_MS = 5000;

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
  // Only a task Caesar's delegate() recorded is run: a planted or copied-in state.json is refused (record-seal.ts).
  const initial = await readVerifiedJsonFile(paths.state, 'state', TaskStateSchema);
  if (!initial) throw new Error(`No state.json in ${paths.dir}: not a task created by delegate().`);
  if (!ACTIVE_STATUSES.includes(initial.status) || (initial.supervisor_pid !== undefined && initial.supervisor_pid !== process.pid)) {
    throw new Error(`Task ${id} is already ${initial.status === 'pending' || initial.status === 'running' ? 'supervised' : initial.status}; nothing to do.`);
  }
  const run = new TaskRun(paths, id, initial, options, log);
  return run.execute();
}

/** What the after-run steps need from the run. */
interface AfterRun {
  result: RunAgentResult;
  translator: Translator;
  launch: LaunchSpec;
  placement: Placement;
  tier: ReportTier;
  plan: SpawnPlan;
  env: NodeJS.ProcessEnv;
  adapter: AgentAdapter;
}

class TaskRun {
  private readonly state: StateWriter;
  private readonly events: EventsWriter;
  /** The first failed write of raw.log or events.jsonl: it stops the agent and fails the task (disk full). */
  private readonly fault = new WriteFault();
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
  private sandbox?: PreparedSandbox;
  /** The socket a sandboxed agent delegates through (delegation-server.ts). */
  private delegation?: DelegationOffer;
  /** The agent CLI's own session id once recorded in state.json (issue 36: what a follow-up or recovery resumes). */
  private session?: string;

  constructor(
    private readonly paths: TaskPaths,
    private readonly id: string,
    initial: TaskState,
    private readonly options: SuperviseOptions,
    private readonly log: (message: string) => void,
  ) {
    this.state = new StateWriter(paths.state, initial, () => this.events.count);
    this.events = new EventsWriter(paths.events, id, (reason) => log(reason));
    this.events.fault = this.fault;
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
      // Decided before the worktree is made (the preflight is one bwrap start, cached per process), beside the slot.
      const confining = sandboxWillConfine(launch.sandbox, agentCannotBeSandboxed(launch, adapter)).catch(() => false); // false: guarded
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
      this.placement = await preparePlacement(launch, adapter, {
        root: this.paths.root,
        id: this.id,
        state: this.state,
        signal: this.cancel.signal,
        holdLease: (lease) => (this.writerLease = lease),
        confined: await confining,
      });
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
      await this.delegation?.close().catch(() => undefined);
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

  private async runAgent(launch: LaunchSpec, adapter: AgentAdapter, placement: Placement): Promise<TaskState> {
    const tier = acpTier(launch, pickTier(launch, adapter));
    const network = await decideTaskNetwork(launch, adapter, placement);
    const task = buildTask(launch, placement, this.paths, network.cut ? false : launch.network);
    await writeJsonAtomic(this.paths.task, task);
    const prompt = renderBrief(task, tier);
    await writeFileAtomic(this.paths.brief, prompt);
    if (tier === 'schema') await writeJsonAtomic(this.paths.reportSchema, strictReportSchema());
    // The ACP transport (launch.transport) drives the agent over the Agent Client Protocol: src/engine/acp/.
    const acp = launch.transport !== 'acp' ? undefined : new AcpSession({
      adapter, task, tier, paths: this.paths, permissions: launch.permissions, inWorktree: Boolean(placement.worktree),
      relay: this.questions, emit: (drafts) => this.relay(drafts), log: this.log, hidden: hiddenByPolicy(launch.sandbox, process.env),
    });
    const plan = (acp ?? adapter).build({
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
    // The adapter's files go in the task folder or the workspace only, never through a link planted there (lay-down.ts).
    const roots = [this.paths.dir, placement.workspace, ...(placement.worktree ? [placement.worktree.path] : [])];
    const restore = await layDownFiles(plan.files ?? [], roots, this.log);
    await this.questions.start();
    await this.outbox.start();
    const translator = acp?.translator ?? adapter.createTranslator({ workspace: placement.workspace });
    const env = agentEnv(plan, this.paths, this.id, launch, adapter.envKeys ?? []);
    this.delegation = await this.options.offerDelegation?.(delegatingParent(this.paths, launch, placement, network.cut), env, this.log);
    const sandbox = await this.confine(plan, env, launch, adapter, placement, true, network).catch(async (err: unknown) => {
      await restore();
      throw err;
    });
    await this.delegation?.settle(sandbox.record.confined);
    await guardCheckoutIfWritable(placement, sandbox, this.paths.dir);
    await this.state.update({ status: 'running', started_at: new Date().toISOString(), isolation: placement.isolation, sandbox: sandbox.record, network: task.network, phase: undefined });
    this.events.append({ type: 'started', agent: launch.agent, command: plan.display });
    // The warm pool is topped up in the background, once the agent has its worktree and is running.
    void placement.refillPool?.().catch((err: unknown) => this.log(`refilling the worktree pool: ${describeError(err)}`));

    let result: RunAgentResult;
    try {
      const run: RunAgentOptions = {
        plan: sandbox.wrap(),
        env,
        rawLogPath: this.paths.rawLog,
        timeoutMs: launch.timeout_ms,
        graceMs: this.graceMs,
        signal: this.cancel.signal,
        fault: this.fault,
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
          this.recordSession(translator.sessionId?.());
        },
        onTerminate: (reason) => {
          this.events.append(
            reason === 'timeout'
              ? { type: 'error', message: `Timeout exceeded (${launch.timeout_ms} ms).`, fatal: true }
              : { type: 'error', message: 'Task cancelled before execution finished.', fatal: true },
          );
        },
      };
      result = await (acp ? acp.run(run, prompt) : runAgentProcess(run));
    } finally {
      await restore();
      await this.delegation?.close();
    }
    const sandboxFindings = await this.sandbox?.finish().catch((err: unknown) => {
      this.log(`taking the report back from the sandbox: ${describeError(err)}`);
      return [];
    });
    placement.findings.push(...(sandboxFindings ?? []));
    try {
      // Times each step after the agent ended, and names the one that hangs (phase-watchdog.ts).
      // The checks' own timeouts come on top of the budget: the user gave each one its time.
      const checksMs = launch.checks.reduce((sum, check) => sum + check.timeout_ms + 2 * this.graceMs, 0);
      const watchdog = new AfterRunWatchdog(process.env, checksMs);
      const after = this.afterRun({ result, translator, launch, placement, tier, plan, env, adapter }, watchdog);
      // Each phase has its own budget; this outer one also bounds the small steps between phases.
      return await this.finalize(await withinBudget(after, concludeBudgetMs() + checksMs, () => watchdog.current));
    } catch (err) {
      if (!(err instanceof PhaseTimeout)) throw err;
      return this.concludeHung(result, err);
    }
  }

  /** Written as soon as the agent's stream names its session, so a run whose supervisor dies can still be resumed. */
  private recordSession(id: string | undefined): void {
    if (!id || id === this.session) return;
    this.session = id;
    void this.state.update({ agent_session: { id } }).catch((err: unknown) => this.log(`recording the agent's session: ${describeError(err)}`));
  }

  /**
   * The agent's (or a check's) sandbox (confinement.ts); the agent's is kept for its after-run work, and its findings
   * become the task's.
   */
  private async confine(plan: SpawnPlan, env: NodeJS.ProcessEnv, launch: LaunchSpec, adapter: AgentAdapter, placement: Placement, forAgent = true, network?: NetworkDecision): Promise<PreparedSandbox> {
    const sandbox = await confineRun({ plan, env, launch, adapter, placement, paths: this.paths, forAgent, network, delegationMounts: this.delegation?.mounts });
    if (forAgent) this.sandbox = sandbox;
    return sandbox;
  }

  /** Everything between the agent's end and its conclusion, each phase under the watchdog's budget for it. */
  private async afterRun({ result, translator, launch, placement, tier, plan, env, adapter }: AfterRun, watchdog: AfterRunWatchdog): Promise<Conclusion> {
    // A conclusion can take minutes (git over a huge change): watch shows "concluding…" with the time since this.
    await this.state.update({ concluding_since: new Date().toISOString() }).catch(() => undefined);
    const phase = <T>(name: AfterRunPhase, work: () => Promise<T>) => {
      void this.state.update({ phase: AFTER_RUN_PHASES[name].label }).catch(() => undefined);
      return watchdog.phase(name, work);
    };
    // Everything the agent put in its outbox reaches events.jsonl before the conclusion (and its `finished`).
    await phase('drain', () => this.outbox.drain());
    if (result.spawnError) this.events.append({ type: 'error', message: result.spawnError, fatal: true });
    await phase('questions', () => this.questions.expireUnanswered());
    let translation: TranslationSummary = {};
    try {
      translation = translator.end(result.exitCode);
      this.recordSession(translation.sessionId);
    } catch (err) {
      this.log(`translator end() threw: ${describeError(err)}`);
    }
    const checks = await phase('checks', () => this.runTaskChecks(launch, placement, env, adapter));
    // After the checks too (they run the agent's code), before the diff: a repository the agent left in a subfolder.
    const written = placement.worktree ? { dir: placement.worktree.path } : launch.mode === 'write' ? { dir: placement.workspace, skip: CAESAR_FOLDERS } : undefined;
    if (written) placement.findings.push(...(await phase('diff', () => moveAsidePlantedGit(written.dir, this.paths, written.skip))));
    await this.state.update({ phase: 'reading the report' });
    return concludeRun({
      checks,
      id: this.id,
      paths: this.paths,
      launch,
      placement,
      run: result,
      translation,
      tier,
      plan,
      translatorFinished: this.events.translatorFinished,
      state: this.state,
      watch: phase,
    });
  }

  /**
   * The task's checks (checks.ts), in the worktree (the workspace in place), each inside the task's sandbox as the
   * agent was (a read-only task's check runs read-only), with a `progress` event as each starts and ends.
   */
  private runTaskChecks(launch: LaunchSpec, placement: Placement, env: NodeJS.ProcessEnv, adapter: AgentAdapter): Promise<CheckResult[]> {
    const cwd = placement.worktree?.path ?? placement.workspace;
    return runChecks({
      checks: launch.checks,
      cwd,
      env,
      taskDir: this.paths.dir,
      graceMs: this.graceMs,
      signal: this.cancel.signal,
      confine: async (checkPlan) => {
        const sandbox = await this.confine({ ...checkPlan, cwd }, env, launch, adapter, placement, false);
        return { plan: sandbox.wrap(), finish: async () => void placement.findings.push(...(await sandbox.finish().catch(() => []))) };
      },
      onStart: (check, index) => this.events.append({ type: 'progress', message: `check ${index + 1}/${launch.checks.length} "${check.name}" started: ${check.command}` }),
      onEnd: (check, index) => this.events.append({ type: 'progress', message: `check ${index + 1}/${launch.checks.length} "${check.name}" ${checkPassed(check) ? 'passed' : `failed (${check.error ?? `exit code ${check.exit_code}`})`} in ${check.duration_ms} ms` }),
    });
  }

  /** The after-run budget was spent: the hung step's git is ended and the task fails, saying what was not verified. */
  private async concludeHung(result: RunAgentResult, timeout: PhaseTimeout): Promise<TaskState> {
    this.outbox.abandon(); // a flood still being relayed stops here: the conclusion's events come next
    const killed = await killOwnChildren();
    const message = `The agent ended, but concluding the task ${timeout.message}; its changes and report were not verified. Review the worktree by hand.`;
    this.log(`${message} Ended ${killed.length} child process(es) of the supervisor.`);
    this.events.append({ type: 'error', message, fatal: true });
    return this.finalize(synthesizedConclusion(this.id, 'failed', message, this.findings(), { exitCode: result.exitCode, signal: result.signal ?? null, nativeFailure: message }));
  }

  /** The agent never ran (cancel while queued, worktree impossible, setup failed…): a synthesized failed report. */
  private async concludeWithoutRun(status: 'failed' | 'cancelled', message: string): Promise<TaskState> {
    if (status === 'failed') this.events.append({ type: 'error', message, fatal: true });
    return this.finalize(synthesizedConclusion(this.id, status, message, this.findings(), { exitCode: null, signal: null, ...(status === 'failed' ? { spawnError: message } : {}) }));
  }

  private findings(): Finding[] {
    return [...(this.placement?.findings ?? []), ...(this.launch?.findings ?? [])];
  }

  /** The conclusion's files in their one order (finalize.ts); the lease and slot go back before the final state. */
  private finalize(final: Conclusion): Promise<TaskState> {
    return writeConclusion(final, {
      resultFile: this.paths.result,
      state: this.state,
      release: () => this.releaseResources(),
      finish: (report) => {
        this.events.finish({ type: 'finished', status: report.status, summary: report.summary, exit_code: final.exitCode ?? null });
      },
    });
  }
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

import type { AppliedDoc, TaskState } from '../../protocol';
import { APPLY_LOCK_WAIT_MS, writeTransaction, type ApplyOutcome } from './apply';
import { ApplyBusyError, acquireApplyLock } from './apply-lock';
import { recoverLocked } from './apply-recovery';
import { writeAppliedRecord } from './apply-journal';
import { runGit } from './git';

/**
 * Writes one landed task into the checkout: the patch from what the checkout holds to the checked, merged result
 * (land-replay.ts). It is the apply's own transaction (apply.ts writeTransaction: journal, backups, rollback, the
 * record in applied.json) under the apply lock, after the recovery of an interrupted earlier apply — land does not
 * have a second one. `git apply --check` first: a file the user edited since the replay was computed refuses the
 * whole patch and nothing is written.
 */
export async function applyLandingPatch(options: {
  root: string;
  state: TaskState;
  checkout: string;
  patch: Buffer;
  files: string[];
  record: AppliedDoc;
}): Promise<ApplyOutcome> {
  const { checkout, state, files } = options;
  let lock;
  try {
    lock = await acquireApplyLock(checkout, state.id, APPLY_LOCK_WAIT_MS);
  } catch (error) {
    if (!(error instanceof ApplyBusyError)) throw error;
    return { applied: false, reason: 'busy', files, conflicts: [], message: `Nothing was applied: ${error.message} Retry when it is done.` };
  }
  try {
    const recovered = await recoverLocked(checkout);
    if (recovered?.action === 'failed') return { applied: false, reason: 'interrupted', files, conflicts: [], message: `Nothing was applied: ${recovered.message}` };
    const check = await runGit(['apply', '--whitespace=nowarn', '--check', '-'], { cwd: checkout, input: options.patch, okCodes: [0, 1, 128] });
    if (check.code !== 0) {
      return {
        applied: false,
        reason: 'conflicts',
        files,
        conflicts: files,
        message: `Nothing was applied: the checkout changed while the task was being landed (${check.stderr.split('\n')[0]?.replace(/^error:\s*/, '') ?? ''}). Land it again.`,
      };
    }
    return await writeTransaction({ root: options.root, state, target: checkout, patch: options.patch, touched: files, files, record: options.record, note: '' });
  } finally {
    await lock.release();
  }
}

/**
 * Records as applied a task whose whole change the checkout already holds (land found nothing left to write): its
 * applied.json, written under the apply lock as apply writes it, so no surface offers to apply it again.
 */
export async function recordContainedLanding(options: { root: string; state: TaskState; checkout: string; record: AppliedDoc }): Promise<{ recorded: true } | { recorded: false; message: string }> {
  let lock;
  try {
    lock = await acquireApplyLock(options.checkout, options.state.id, APPLY_LOCK_WAIT_MS);
  } catch (error) {
    if (!(error instanceof ApplyBusyError)) throw error;
    return { recorded: false, message: `${error.message} Land it again when that is done.` };
  }
  try {
    await writeAppliedRecord(options.root, options.state.id, options.record);
    return { recorded: true };
  } finally {
    await lock.release();
  }
}

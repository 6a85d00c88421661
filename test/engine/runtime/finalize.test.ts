import { strict as assert } from 'node:assert';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeConclusion, type Conclusion } from '../../../src/engine/run/finalize';
import { StateWriter } from '../../../src/engine/run/state-writer';
import type { TaskState } from '../../../src/protocol';
import { runningState } from './helpers';

/*
 * The supervisor and gc (concluding a lost task) both publish a task's end through writeConclusion. A follower
 * relies on its order: result.json first, then the lease and slot given back, then the final state, then `finished`.
 */

const conclusion: Conclusion = {
  status: 'succeeded',
  report: { protocol: 'caesar.report/v1', task_id: 't_fin', status: 'success', summary: 'done', details: '', changes: [], commands_run: [], findings: [], questions: [], next_steps: [], artifacts: [] },
  source: 'file',
  verifiedBy: 'declaration',
  agentReportValid: true,
  exitCode: 0,
  signal: null,
};

/** The task's state while its report is read: what writeConclusion replaces with the final one. */
function runningTask(root: string): TaskState {
  return runningState('t_fin', root, { objective: 'finalize', mode: 'read-only', isolation: 'inplace', phase: 'reading the report', agent_pid: 4242 });
}

describe('engine: writeConclusion', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(tmpdir(), 'caesar-finalize-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('writes result.json, releases, writes the final state, then appends `finished`, each step seeing the previous one', async () => {
    const resultFile = path.join(dir, 'result.json');
    const stateFile = path.join(dir, 'state.json');
    const seen: string[] = [];
    const statusOnDisk = () => (existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as TaskState).status : 'absent');
    class ObservedStateWriter extends StateWriter {
      override async update(patch: Partial<TaskState>): Promise<TaskState> {
        seen.push(`state write (result ${existsSync(resultFile) ? 'present' : 'absent'})`);
        return super.update(patch);
      }
    }
    const final = await writeConclusion(conclusion, {
      resultFile,
      state: new ObservedStateWriter(stateFile, runningTask(dir)),
      release: async () => {
        seen.push(`release (result ${existsSync(resultFile) ? 'present' : 'absent'}, state ${statusOnDisk()})`);
      },
      finish: (report) => {
        seen.push(`finished ${report.status} (state ${statusOnDisk()})`);
      },
    });
    assert.deepEqual(seen, ['release (result present, state absent)', 'state write (result present)', 'finished success (state succeeded)']);
    assert.equal(final.status, 'succeeded');
    assert.equal(final.report_status, 'success');
    assert.equal(final.exit_code, 0);
    assert.equal(final.phase, undefined, 'the phase is cleared');
    assert.equal(final.agent_pid, undefined, 'the agent pid is cleared');
    const result = JSON.parse(readFileSync(resultFile, 'utf8'));
    assert.equal(result.report.summary, 'done');
    assert.equal(result.report_source, 'file');
  });

  it('leaves exit_code and signal out of the state when nobody saw the agent end (gc concluding a lost task)', async () => {
    const { exitCode: _exit, signal: _signal, ...unseen } = conclusion;
    const final = await writeConclusion(
      { ...unseen, status: 'failed', error: 'supervisor disappeared' },
      { resultFile: path.join(dir, 'result.json'), state: new StateWriter(path.join(dir, 'state.json'), runningTask(dir)), release: async () => {}, finish: () => {} },
    );
    assert.equal(final.status, 'failed');
    assert.equal(final.error, 'supervisor disappeared');
    assert.ok(!('exit_code' in final) && !('signal' in final));
  });
});

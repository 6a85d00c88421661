import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, promises as fs, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ACTIVE_STATUSES, ResultDocSchema, TaskStateSchema, taskPaths, type TaskPaths } from '../../../src/protocol';
import { readJsonFile } from '../../../src/engine/store/atomic';
import { buildCli, makeRepo, pidAlive, startFixture, waitFor } from './helpers';

/*
 * The supervisor's final writes, as a reader in another process sees them. The real supervisor runs under
 * gated-supervisor.cjs, which stops it before each write of its conclusion (a blocking FIFO read) and names the write
 * it is about to do; the test looks at the task folder at each stop and lets it go. What a reader may see, in order:
 * the agent's report.json, then result.json complete, then the final state (lease and slot already given back), then
 * the single `finished` event. Never the final state without result.json, never `finished` before the final state, and
 * no state write between result.json and the final one (a late phase label once used to land there).
 */

interface Seen {
  report: boolean;
  result: 'absent' | 'complete';
  status: string;
  finished: number;
}

async function look(paths: TaskPaths): Promise<Seen> {
  const result = existsSync(paths.result) ? ResultDocSchema.parse(JSON.parse(readFileSync(paths.result, 'utf8'))) : undefined;
  const state = await readJsonFile(paths.state, TaskStateSchema);
  const events = existsSync(paths.events) ? readFileSync(paths.events, 'utf8').split('\n').filter(Boolean) : [];
  return {
    report: existsSync(paths.report),
    result: result ? 'complete' : 'absent',
    status: state?.status ?? 'absent',
    finished: events.filter((line) => (JSON.parse(line) as { type: string }).type === 'finished').length,
  };
}

describe('engine: the supervisor\'s final writes, observed from another process', function () {
  this.timeout(60_000);
  let supervisorPid: number | undefined;
  afterEach(() => {
    // A failed assertion leaves the supervisor stopped at a gate: it is ours, end it by its pid.
    if (supervisorPid && pidAlive(supervisorPid)) process.kill(supervisorPid, 'SIGKILL');
  });

  it('report, then result.json, then the final state, then `finished`: each step visible only after the one before', async () => {
    const repo = makeRepo();
    const gates = mkdtempSync(path.join(tmpdir(), 'caesar-gates-'));
    const { id } = await startFixture(repo, { mode: 'success' }, { isolation: 'inplace', allow_inplace_write: true }, {
      CAESAR_SUPERVISOR_JS: path.join(__dirname, 'gated-supervisor.cjs'),
      CAESAR_TEST_REAL_SUPERVISOR: await buildCli(),
      CAESAR_TEST_GATE_DIR: gates,
    });
    const paths = taskPaths(repo, id);
    const steps: Array<{ write: string; seen: Seen; slots: string[] }> = [];
    for (let n = 1; ; n++) {
      const gate = path.join(gates, `gate-${n}`);
      const write = await waitFor(`the supervisor's write #${n}`, () => existsSync(gate) && readFileSync(gate, 'utf8'), 30_000);
      supervisorPid ??= (await readJsonFile(paths.state, TaskStateSchema))?.supervisor_pid;
      steps.push({ write, seen: await look(paths), slots: slotsHeld(repo) });
      await fs.writeFile(path.join(gates, `go-${n}`), 'go');
      if (write === 'finished appended') break;
    }
    assert.deepEqual(
      steps.map((s) => ({ write: s.write, ...s.seen })),
      [
        { write: 'rename result.json', report: true, result: 'absent', status: 'running', finished: 0 },
        { write: 'rename state.json (succeeded)', report: true, result: 'complete', status: 'running', finished: 0 },
        { write: 'append finished', report: true, result: 'complete', status: 'succeeded', finished: 0 },
        { write: 'finished appended', report: true, result: 'complete', status: 'succeeded', finished: 1 },
      ],
    );
    assert.deepEqual(steps[1]!.slots, [], 'the slot is given back before the final state is published');
    assert.ok(!ACTIVE_STATUSES.includes(steps[2]!.seen.status as never));
    await waitFor('the supervisor to exit', () => supervisorPid !== undefined && !pidAlive(supervisorPid), 30_000);
    assert.deepEqual(await look(paths), steps[3]!.seen, 'nothing is written after `finished`');
    await fs.rm(gates, { recursive: true, force: true });
  });
});

function slotsHeld(repo: string): string[] {
  const dir = path.join(repo, '.caesar', 'state', 'slots');
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json')) : [];
}

import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { taskPaths } from '../../src/protocol';
import { DelegationRefusedError, agentCatalogue, agentStatuses, delegateTask, describeCapabilities, listRoles, pickForRole, requestCancel } from '../../src/engine/tasks';
import { buildCli, makeRepo, waitForFinished } from './runtime/helpers';

/** The engine's use-case API (src/engine/tasks), called the way every front end calls it. Real git, real supervisor. */
describe('engine/tasks: the use cases front ends call', function () {
  this.timeout(60_000);
  before(async () => {
    await buildCli();
  });

  /** A repository declaring an agent by a path relative to the root: the one catalogue resolves it from the root. */
  function repoWithRelativeAgent(): string {
    const repo = makeRepo();
    const script = path.join(repo, 'tools/agent.sh');
    mkdirSync(path.dirname(script), { recursive: true });
    writeFileSync(script, '#!/usr/bin/env bash\necho \'{"protocol":"caesar.report/v1","status":"success","summary":"ok"}\' > "$CAESAR_REPORT_PATH"\n');
    chmodSync(script, 0o755);
    mkdirSync(path.join(repo, '.caesar'), { recursive: true });
    writeFileSync(path.join(repo, '.caesar/config.toml'), '[[agent]]\nid = "local"\nbin = "./tools/agent.sh"\nargs = ["{{prompt}}"]\n');
    return repo;
  }

  it('delegateTask resolves and starts a task whatever the caller\'s cwd, recording the parent task and the next depth', async () => {
    const repo = repoWithRelativeAgent();
    assert.notEqual(process.cwd(), repo, 'the relative bin must be resolved from the root, not from here');
    const parent = 't_0123456789abcdef0123456789abcdef';
    const delegated = await delegateTask(repo, { objective: 'do it', agent: 'local', isolation: 'worktree' }, { env: { ...process.env, CAESAR_TASK_ID: parent, CAESAR_DEPTH: '1' }, trusted: true });
    assert.equal(delegated.launch.agent, 'local');
    assert.equal(delegated.launch.depth, 2);
    assert.equal(delegated.launch.parent_task_id, parent);
    const state = JSON.parse(readFileSync(taskPaths(repo, delegated.id).state, 'utf8'));
    assert.equal(state.parent_task_id, parent, 'visible in state.json from the first moment');
    const finished = await waitForFinished(repo, delegated.id);
    assert.equal(finished.state.status, 'succeeded', finished.state.error);
    assert.equal(finished.result.report.summary, 'ok');
  });

  it('the doctor view of agents uses the same catalogue: the relative agent is installed, found under the root', async () => {
    const repo = repoWithRelativeAgent();
    const loaded = await loadConfig({ root: repo, trusted: true });
    const statuses = await agentStatuses(loaded, agentCatalogue(loaded, { root: repo }));
    const local = statuses.find((s) => s.id === 'local')!;
    assert.equal(local.installed, true);
    assert.equal(local.location, path.join(repo, 'tools/agent.sh'));
    assert.equal(local.origin, 'project');
    assert.match(describeCapabilities(local.capabilities), new RegExp(`^network ${local.capabilities!.network}; `));
    assert.equal(describeCapabilities(undefined), 'capabilities unknown');
  });

  it('pickForRole and listRoles walk the role\'s agents like delegation does, with the reason of each skip', async () => {
    const repo = repoWithRelativeAgent();
    writeFileSync(path.join(repo, '.caesar/config.toml'), `${readFileSync(path.join(repo, '.caesar/config.toml'), 'utf8')}\n[[role]]\nname = "helper"\nagents = ["nosuch", "local"]\nmode = "write"\n`);
    const loaded = await loadConfig({ root: repo, trusted: true });
    const catalogue = agentCatalogue(loaded, { root: repo });
    const pick = await pickForRole(loaded, catalogue, loaded.config.roles.find((r) => r.name === 'helper')!);
    assert.equal(pick.agent, 'local');
    assert.deepEqual(pick.skipped, [{ agent: 'nosuch', reason: 'unknown agent' }]);
    const roles = await listRoles(loaded, catalogue);
    assert.equal(roles.find((r) => r.role.name === 'helper')?.picks, 'local');
  });

  it('refusals, a broken configuration included, are DelegationRefusedError and leave no task directory', async () => {
    const repo = makeRepo();
    await assert.rejects(delegateTask(repo, { objective: 'x', agent: 'nosuch' }, { trusted: true }), (err: unknown) => err instanceof DelegationRefusedError && err.code === 'unknown-agent');
    mkdirSync(path.join(repo, '.caesar'), { recursive: true });
    writeFileSync(path.join(repo, '.caesar/config.toml'), '[policy\n');
    await assert.rejects(delegateTask(repo, { objective: 'x', agent: 'demo' }), (err: unknown) => err instanceof DelegationRefusedError && err.code === 'config');
    assert.ok(!existsSync(path.join(repo, '.caesar/tasks')), 'nothing was written');
    await assert.rejects(requestCancel(repo, 't_00000000000000000000000000000000'), /Unknown task/);
  });
});

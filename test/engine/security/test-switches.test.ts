import { strict as assert } from 'node:assert';
import * as testBuild from '../../../src/base/test-switches';
import * as published from '../../../src/base/test-switches.production';

/** The published build's stand-in for the test switches (esbuild.mjs --production bundles it instead). */
describe('base: test switches, test build and published build', () => {
  it('the published stand-in reads no switch, passes none on, and drops from agents every variable shaped like one', () => {
    const env = { CAESAR_BWRAP: '/tmp/pass-through', CAESAR_CLI_JS: '/tmp/x.js' };
    assert.equal(published.testSwitch('bwrap', env), undefined);
    assert.equal(published.testSwitchName('bwrap'), undefined);
    assert.deepEqual(published.AGENT_TEST_SWITCHES, []);
    for (const name of ['CAESAR_BWRAP', 'CAESAR_SOCAT', 'CAESAR_CLI_JS', 'CAESAR_SUPERVISOR_JS', 'CAESAR_TEST_APPLY_CRASH', 'CAESAR_TEST_ANYTHING']) {
      assert.equal(published.droppedFromAgents(name), true, name);
    }
    for (const name of ['CAESAR_TASK_ID', 'CAESAR_DEPTH', 'CAESAR_DELEGATION_SOCKET', 'PATH']) assert.equal(published.droppedFromAgents(name), false, name);
  });

  it('the test build reads them (the tests\' own scripts and fakes) and drops nothing', () => {
    assert.equal(testBuild.testSwitch('bwrap', { CAESAR_BWRAP: '' }), '');
    assert.equal(testBuild.testSwitch('applyCrash', { CAESAR_TEST_APPLY_CRASH: 'git:1' }), 'git:1');
    assert.deepEqual([...testBuild.AGENT_TEST_SWITCHES].sort(), ['CAESAR_CLI_JS', 'CAESAR_DEMO_AGENT_JS', 'CAESAR_SUPERVISOR_JS']);
    assert.equal(testBuild.droppedFromAgents('CAESAR_BWRAP'), false);
  });
});

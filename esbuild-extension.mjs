// The extension bundle's own options, shared by esbuild.mjs and the test that inspects what ships
// (test/unit/extension/shipped-api.test.ts). CAESAR_TEST_SEAMS is a build-time constant: the seams the in-editor
// tests use to stand in for Workspace Trust and the modal confirmations of apply and discard are compiled in only
// with `--test-seams` (test/extension/run.mjs and electron.mjs pass it), never in a `--production` build (the
// .vsix), so no other installed extension can reach them through the API activate() returns.
export function extensionBundle({ production = false, testSeams = false } = {}) {
  return {
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    external: ['vscode'],
    define: { CAESAR_TEST_SEAMS: JSON.stringify(testSeams && !production) },
  };
}

// Names only the in-editor tests' API has (src/extension/api.ts): its drivers answer a question as the person would
// (questions), drive the pickers and the Delegate flow, reach the task store, silence modals and Workspace Trust. The
// shipped extension exports no API at all (issue 34); finding one of these in a production bundle means it does.
// (`choose`, `currentStep`, `store`, `search` are also names of the extension's own internals, so the API's siblings
// and error texts stand for them.)
export const TEST_API_MARKERS = [
  'setRemindAfterMs',
  'waitForNotice',
  'promptOpen',
  'waitForStep',
  'treeSnapshot',
  'waitForTree',
  'statusSnapshot',
  'childrenShown',
  'setTrustProbe',
  'setConfirm',
  'a question notification for task',
  'tree condition not met within',
];

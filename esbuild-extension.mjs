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

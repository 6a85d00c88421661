import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

/**
 * Accepting what a task changed in the repository's shared git dir (a hook, the config, refs) is the person's call,
 * never the MCP client's: a model that could pass its own consent would apply over a planted hook unasked. So the
 * server asks the person behind the client itself (`elicitation/create`, which the client must show to its user), and
 * a client that cannot ask is told to have the person run the CLI or use the editor.
 */

export type RepositoryApproval = { approved: true } | { approved: false; message: string };

/** How long the question stays open: a person reads the list first; the tool call's own cancel withdraws it sooner. */
const APPROVAL_TIMEOUT_MS = 60 * 60 * 1000;

/**
 * Asks the person whether to go on although the shared git dir changed. `changes` maps each task to what changed;
 * `command` is what the person would run themselves (`caesar apply <id> --accept-repository-changes`).
 */
export async function askToAcceptRepositoryChanges(
  server: Server,
  request: { action: 'apply' | 'land'; changes: ReadonlyMap<string, readonly string[]>; command: string },
  signal: AbortSignal,
): Promise<RepositoryApproval> {
  const yourself = `To go on anyway, run \`${request.command}\` yourself after checking them, or approve in the editor (the task's Apply Changes).`;
  if (!server.getClientCapabilities()?.elicitation) {
    return { approved: false, message: `Nothing was done: this MCP client cannot ask you (it does not support elicitation), and a client's own consent is not taken. ${yourself}` };
  }
  const listed = [...request.changes].map(([id, changes]) => `Task ${id}:\n${listedChanges(changes)}`).join('\n');
  try {
    const answer = await server.elicitInput(
      {
        message:
          `The repository's shared git dir (hooks, config, info/, refs) changed while these tasks ran:\n${listed}\n` +
          `A planted hook or config runs in your own git commands. ${request.action === 'apply' ? 'Apply' : 'Land'} anyway?`,
        requestedSchema: {
          type: 'object',
          properties: { accept: { type: 'boolean', title: 'I checked these changes: go on', default: false } },
          required: ['accept'],
        },
      },
      { signal, timeout: APPROVAL_TIMEOUT_MS },
    );
    if (answer.action === 'accept' && answer.content?.accept === true) return { approved: true };
    return { approved: false, message: `Nothing was done: you did not accept the repository's changes (${answer.action === 'accept' ? 'left unticked' : answer.action}).` };
  } catch (err) {
    return { approved: false, message: `Nothing was done: the question to you did not get an answer (${(err as Error).message}). ${yourself}` };
  }
}

/** At most 30 lines per task, as the editor's modal shows them: the answer must fit in a client's dialog. */
function listedChanges(changes: readonly string[]): string {
  const shown = changes.slice(0, 30).map((c) => `  - ${c}`);
  if (changes.length > 30) shown.push(`  … and ${changes.length - 30} more`);
  return shown.join('\n');
}

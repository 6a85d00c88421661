import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { BoundedStdioTransport } from '../bounded-stdio';
import { registerOrchestratorTools, type OrchestratorContext } from './tools';
import { registerOrchestratorPrompts } from './prompts';
import { reportedVersion } from '../../base/version';

export const ORCHESTRATOR_SERVER_NAME = 'caesar';

/** The orchestrator MCP server: the caesar_* tools over the engine's use cases, for the given root, and the prompts (race, fanout, review, land). */
export function createOrchestratorServer(ctx: OrchestratorContext): McpServer {
  const server = new McpServer(
    { name: ORCHESTRATOR_SERVER_NAME, version: reportedVersion() },
    {
      capabilities: { tools: {}, prompts: {} },
      instructions:
        'Caesar delegates coding tasks to other agent CLIs and checks their work with git. Typical flow: caesar_list_agents or caesar_list_roles → caesar_delegate → caesar_await (answer pending_questions with caesar_answer) → caesar_diff → caesar_apply. Several finished tasks onto a moved HEAD, each re-checked on the combination: caesar_land (stops at the first conflict or failed check). The prompts race, fanout, review and land spell these flows out.',
    },
  );
  registerOrchestratorTools(server, ctx);
  registerOrchestratorPrompts(server);
  return server;
}

/**
 * `caesar mcp serve`: serves over stdio until the client closes the connection. stdout carries protocol messages
 * only, so anything that would print to it (console.log in a dependency) is sent to stderr instead.
 */
export async function serveOrchestrator(ctx: OrchestratorContext): Promise<void> {
  const toStderr = (...args: unknown[]) => process.stderr.write(`${args.map(String).join(' ')}\n`);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  const server = createOrchestratorServer(ctx);
  const transport = new BoundedStdioTransport();
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  process.stderr.write(`caesar mcp: serving the orchestrator tools for ${ctx.root} on stdio\n`);
  await closed;
  await server.close().catch(() => undefined);
}

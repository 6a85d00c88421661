import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { Channel } from '../../protocol';
import { locateDistFile } from '../../agents/dist-path';

/** The name agents know the return channel by (their tools appear as e.g. `mcp__caesar__submit_report`). */
export const CHANNEL_SERVER_NAME = 'caesar';

/**
 * The return channel's coordinates for one task (task.json `channel`): `<node> <caesar.js> channel serve --task-dir
 * <dir>` over stdio, found the way delegate() finds the supervisor's script ($CAESAR_CLI_JS, beside the running
 * bundle, or the package's dist/). Under Electron (the extension host) process.execPath is not a plain Node: the
 * agent's MCP client would start it without ELECTRON_RUN_AS_NODE, so a `node` from PATH is used instead. Anything
 * missing means no channel (undefined), never an exception: the task then runs on a lower report tier.
 */
export function channelCoordinates(taskDir: string, env: NodeJS.ProcessEnv = process.env): Channel | undefined {
  const launcher = channelLauncher(env);
  if (!launcher) return undefined;
  return {
    transport: 'mcp-stdio',
    command: launcher.node,
    args: [launcher.script, 'channel', 'serve', '--task-dir', taskDir],
    server_name: CHANNEL_SERVER_NAME,
  };
}

/** The Node binary and the CLI script that serve the channel, or undefined when either cannot be found. */
export function channelLauncher(env: NodeJS.ProcessEnv = process.env): { node: string; script: string } | undefined {
  let script: string;
  try {
    script = locateDistFile('caesar.js', 'cliScript', env);
  } catch {
    return undefined;
  }
  const node = process.versions.electron ? findOnPath('node', env) : process.execPath;
  return node ? { node, script } : undefined;
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

import { buildCli } from '../engine/runtime/helpers';

/**
 * The CLI bundle (src/bin/caesar.ts, built from the current sources by the runtime helpers): it serves
 * `caesar channel serve --task-dir <dir>` and runs the supervisor. CAESAR_CLI_JS points at it, so the supervisor
 * writes its path into task.json's channel coordinates.
 */
export function buildChannelCli(): Promise<string> {
  return buildCli();
}

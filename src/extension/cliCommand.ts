import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  ForeignCommandError,
  currentRuntime,
  defaultShimDir,
  installShim,
  isOnPath,
  pathDirs,
  shimDirCandidates,
  shimState,
  uninstallShim,
  writablePathDirs,
} from '../base/cli-shim';
import { pickOne } from './picker';

/** globalState key: the file the last install wrote, so uninstall and updates find it wherever the user put it. */
const INSTALLED_FILE_KEY = 'caesar.cliShimFile';

/** Arguments for running the commands without questions (tests, keybindings): the folder, and whether to replace. */
export interface InstallCliArgs {
  directory?: string;
  replaceForeign?: boolean;
}

export interface InstallCliResult {
  file: string;
  onPath: boolean;
}

/**
 * "Caesar: Install 'caesar' Command in PATH" and its Uninstall, like VS Code's "Shell Command: Install 'code' command
 * in PATH": the timeline and the CLI say `caesar apply <id>`, so that command should exist in the user's terminal.
 */
export function registerCliCommands(context: vscode.ExtensionContext, cliScript: string, log: vscode.LogOutputChannel): vscode.Disposable[] {
  void refreshInstalledShim(context, cliScript, log);
  return [
    vscode.commands.registerCommand('caesar.installCli', (args?: InstallCliArgs) =>
      installCli(context, cliScript, log, args).catch((err: Error) => {
        void vscode.window.showErrorMessage(`Caesar: could not install the 'caesar' command: ${err.message}`);
        return undefined;
      }),
    ),
    vscode.commands.registerCommand('caesar.uninstallCli', () =>
      uninstallCli(context, log).catch((err: Error) => {
        void vscode.window.showErrorMessage(`Caesar: could not remove the 'caesar' command: ${err.message}`);
        return [];
      }),
    ),
  ];
}

async function installCli(
  context: vscode.ExtensionContext,
  cliScript: string,
  log: vscode.LogOutputChannel,
  args: InstallCliArgs = {},
): Promise<InstallCliResult | undefined> {
  const envPath = process.env.PATH;
  const dir = args.directory ?? (await chooseDirectory(envPath));
  if (!dir) return undefined;
  const file = path.join(dir, 'caesar');
  const target = currentRuntime(cliScript);
  let outcome;
  try {
    outcome = await installShim(file, target, { replaceForeign: args.replaceForeign });
  } catch (err) {
    if (!(err instanceof ForeignCommandError) || args.replaceForeign === false) throw err;
    const replace = await vscode.window.showWarningMessage(
      `${file} already exists and was not installed by Caesar. Replace it?`,
      { modal: true, detail: 'It may be another program named caesar, or a link made by `npm link`.' },
      'Replace',
    );
    if (replace !== 'Replace') return undefined;
    outcome = await installShim(file, target, { replaceForeign: true });
  }
  await context.globalState.update(INSTALLED_FILE_KEY, file);
  const onPath = isOnPath(dir, envPath);
  log.info(`'caesar' command ${outcome}: ${file} runs ${target.script} with ${target.runtime}${target.electron ? ' (ELECTRON_RUN_AS_NODE=1)' : ''}`);
  void vscode.window.showInformationMessage(
    onPath
      ? `Caesar: the 'caesar' command is installed in ${dir}. Try \`caesar ps\` in a new terminal.`
      : `Caesar: the 'caesar' command is installed in ${dir}, which is not on your PATH. Add it to your shell profile ` +
          `(export PATH="${dir}:$PATH") or run ${file} directly.`,
  );
  return { file, onPath };
}

/**
 * ~/.local/bin when it is on PATH (no question asked, as VS Code's own command does); otherwise the user picks: a
 * user's writable bin folder that is on PATH (shimDirCandidates: no sbin, no system or tool-managed folder),
 * ~/.local/bin anyway (they will add it), or any folder.
 */
async function chooseDirectory(envPath: string | undefined): Promise<string | undefined> {
  const preferred = defaultShimDir(os.homedir());
  if (isOnPath(preferred, envPath)) return preferred;
  type Choice = vscode.QuickPickItem & { dir?: string };
  const onPath = shimDirCandidates(await writablePathDirs(envPath), os.homedir());
  const choices: Choice[] = [
    ...onPath.map((dir) => ({ label: dir, description: 'on your PATH', dir })),
    { label: preferred, description: 'not on your PATH: you will add it to your shell profile', dir: preferred },
    { label: 'Choose a folder…', description: 'anywhere; add it to PATH yourself if it is not there' },
  ];
  const picked = await pickOne(choices, {
    title: "Caesar: Install 'caesar' Command in PATH",
    placeholder: `${preferred} is not on the PATH this window sees. Where should the 'caesar' command go?`,
  });
  if (!picked) return undefined;
  if (picked.dir) return picked.dir;
  const folder = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: "Install 'caesar' here" });
  return folder?.[0]?.fsPath;
}

/** Removes every shim of ours it can find (the remembered one, ~/.local/bin, PATH); any other `caesar` stays. */
async function uninstallCli(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<string[]> {
  const remembered = context.globalState.get<string>(INSTALLED_FILE_KEY);
  const candidates = new Set([
    ...(remembered ? [remembered] : []),
    path.join(defaultShimDir(os.homedir()), 'caesar'),
    ...pathDirs(process.env.PATH).map((d) => path.join(d, 'caesar')),
  ]);
  const removed: string[] = [];
  const others: string[] = [];
  for (const file of candidates) {
    const state = await uninstallShim(file);
    if (state === 'ours') removed.push(file);
    else if (state === 'foreign') others.push(file);
  }
  await context.globalState.update(INSTALLED_FILE_KEY, undefined);
  if (removed.length) log.info(`'caesar' command removed: ${removed.join(', ')}`);
  const left = others.length ? ` Left alone (not installed by Caesar): ${others.join(', ')}.` : '';
  void vscode.window.showInformationMessage(
    removed.length ? `Caesar: removed the 'caesar' command (${removed.join(', ')}).${left}` : `Caesar: no 'caesar' command installed by Caesar was found.${left}`,
  );
  return removed;
}

/** An update moves the extension (and the editor's runtime): keep an installed shim pointing at the current ones. */
async function refreshInstalledShim(context: vscode.ExtensionContext, cliScript: string, log: vscode.LogOutputChannel): Promise<void> {
  const file = context.globalState.get<string>(INSTALLED_FILE_KEY);
  if (!file) return;
  try {
    if ((await shimState(file)) !== 'ours') return; // removed or replaced by the user since: theirs now
    const outcome = await installShim(file, currentRuntime(cliScript));
    if (outcome === 'updated') log.info(`'caesar' command at ${file} now runs ${cliScript}`);
  } catch (err) {
    log.warn(`could not update the 'caesar' command at ${file}: ${(err as Error).message}`);
  }
}

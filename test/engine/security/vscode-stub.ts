import Module from 'node:module';

/*
 * Just enough of the `vscode` module to run the extension's review code (src/extension/review/) under mocha: workspace trust is a switch,
 * and every command or message the code under test issues is recorded instead of shown. installVscodeStub() makes
 * `require('vscode')` resolve here.
 */

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query = '',
  ) {}
  static file(fsPath: string): Uri {
    return new Uri('file', fsPath);
  }
  static from(parts: { scheme: string; path: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.path, parts.query);
  }
  toString(): string {
    return `${this.scheme}:${this.path}${this.query ? `?${this.query}` : ''}`;
  }
  get fsPath(): string {
    return this.path;
  }
}

export const workspace = { isTrusted: true };

export const recorded = { commands: [] as unknown[][], warnings: [] as string[], errors: [] as string[] };

export const commands = {
  executeCommand(...args: unknown[]): Promise<undefined> {
    recorded.commands.push(args);
    return Promise.resolve(undefined);
  },
};

export const window = {
  showWarningMessage(message: string): Promise<undefined> {
    recorded.warnings.push(message);
    return Promise.resolve(undefined);
  },
  showErrorMessage(message: string): Promise<undefined> {
    recorded.errors.push(message);
    return Promise.resolve(undefined);
  },
};

export function resetVscodeStub(trusted: boolean): void {
  workspace.isTrusted = trusted;
  recorded.commands.length = 0;
  recorded.warnings.length = 0;
  recorded.errors.length = 0;
}

let installed = false;

export function installVscodeStub(): void {
  if (installed) return;
  installed = true;
  const self = __filename;
  const moduleWithResolver = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const original = moduleWithResolver._resolveFilename;
  moduleWithResolver._resolveFilename = function (request: string, ...rest: unknown[]): string {
    if (request === 'vscode') return self;
    return original.call(this, request, ...rest);
  };
}

/** One problem found in a config file, located as precisely as the source allows. */
export interface ConfigProblem {
  /** The field path as a person would type it: `policy.max_paralel`, `role[1].mode`. */
  key: string;
  message: string;
  line?: number;
  column?: number;
}

/**
 * A config file that cannot be used: unreadable, not TOML, or not the schema. Always names the file, and the line and
 * key when known. Callers on the command line map it to exit 2 (a configuration error, not a runtime failure).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** The exit code a command line should use (reference §6.1: config errors are usage errors). */
  readonly exitCode = 2;
  constructor(
    readonly file: string,
    readonly problems: ConfigProblem[],
    headline?: string,
  ) {
    super(headline ?? formatProblems(file, problems));
  }
  get line(): number | undefined {
    return this.problems[0]?.line;
  }
  get key(): string | undefined {
    return this.problems[0]?.key;
  }
}

function formatProblems(file: string, problems: ConfigProblem[]): string {
  const lines = problems.map((p) => `  ${p.line !== undefined ? `line ${p.line}: ` : ''}${p.key ? `${p.key}: ` : ''}${p.message}`);
  return `Invalid config file ${file}:\n${lines.join('\n')}`;
}

/** A write that cannot be done as asked (e.g. removing what the target layer does not declare). Exit 2 as well. */
export class ConfigEditError extends Error {
  override readonly name = 'ConfigEditError';
  readonly exitCode = 2;
}

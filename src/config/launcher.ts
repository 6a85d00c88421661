/**
 * `[launcher] extra_args` go to sbatch as they are, and a project configuration may come from a cloned repository:
 * so only options that shape where and when a job runs are accepted, never one that changes what it runs, what it
 * sees or where it writes (`--wrap`, `--export`, `--output`/`--error`, `--chdir`, `--get-user-env`, `--propagate`…).
 * Each must be spelled `--name=value` (or a bare `--name` for flags), so no value can be taken for another option.
 */
const SBATCH_OPTIONS_WITH_VALUE = new Set([
  'account',
  'qos',
  'constraint',
  'gres',
  'gpus',
  'gpus-per-node',
  'nodes',
  'ntasks',
  'mem-per-cpu',
  'nodelist',
  'exclude',
  'reservation',
  'comment',
  'begin',
  'nice',
  'priority',
  'clusters',
  'licenses',
  'tmp',
  'mail-type',
  'deadline',
  'time-min',
]);
const SBATCH_FLAGS = new Set(['exclusive', 'requeue', 'no-requeue', 'hold', 'contiguous', 'overcommit', 'oversubscribe']);

/** The first extra sbatch argument that is not allowed, with why; undefined when all are. */
export function sbatchArgProblem(args: readonly string[]): string | undefined {
  for (const arg of args) {
    const match = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (!match) return `"${arg}" is not an sbatch option spelled --name=value`;
    const [, name, value] = match;
    if (value === undefined ? !SBATCH_FLAGS.has(name!) : !SBATCH_OPTIONS_WITH_VALUE.has(name!)) {
      return `"${arg}" is not one of the sbatch options caesar passes on (${[...SBATCH_OPTIONS_WITH_VALUE].map((o) => `--${o}=…`).join(', ')}, ${[...SBATCH_FLAGS].map((f) => `--${f}`).join(', ')})`;
    }
    if (/[\n\r\0]/.test(value ?? '')) return `"${name}" has a line break or NUL in its value`;
  }
  return undefined;
}

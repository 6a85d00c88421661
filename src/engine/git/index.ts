/*
 * git/ — everything that runs git or reads what git says: the git runner, worktrees and the warm pool, the diff
 * against a task's base commit (reconcile, diff-parse, repository-relative paths), the checkout guard, the workshop
 * (what a fresh worktree gets copied or linked in), the repositories an agent plants in its worktree, apply and
 * discard, the checks a task record passes before git runs on its say-so, and which of a task's files changed since
 * its base.
 * Rooms above import its files directly; this index lists them.
 */
export * from './apply';
export * from './changed-since-base';
export * from './checkout-guard';
export * from './diff-parse';
export * from './git';
export * from './nested-git';
export * from './reconcile';
export * from './record-checks';
export * from './rel-path';
export * from './workshop';
export * from './worktree';
export * from './worktree-pool';

import type * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import { isActive, type TaskSummary } from '../../engine/tasks';

/** What the Tasks view can filter on, as the Problems view filters on severities. */
export type TaskCategory = 'active' | 'question' | 'succeeded' | 'applied' | 'discarded' | 'failed' | 'hidden';

export const CATEGORY_LABELS: Record<TaskCategory, string> = {
  question: 'Needs input',
  active: 'Running or pending',
  succeeded: 'Finished, not applied',
  applied: 'Applied',
  discarded: 'Discarded',
  failed: 'Failed, cancelled, timed out or lost',
  hidden: 'Cleared (hidden by Clear Finished)',
};

const ALL: TaskCategory[] = ['question', 'active', 'succeeded', 'applied', 'discarded', 'failed', 'hidden'];
const DEFAULT_SHOWN: TaskCategory[] = ALL.filter((c) => c !== 'hidden');
const SHOWN_KEY = 'caesar.tasks.shownCategories';
const HIDDEN_KEY = 'caesar.tasks.hidden';

/** Which category a task is in: what it waits for first, then what became of its work. */
export function categoryOf(s: TaskSummary): Exclude<TaskCategory, 'hidden'> {
  if (isActive(s.observed)) return s.pendingQuestions.length ? 'question' : 'active';
  if (s.discarded) return 'discarded';
  if (s.applied) return 'applied';
  return s.observed === 'succeeded' ? 'succeeded' : 'failed';
}

/**
 * The Tasks view's filter (per workspace): the categories shown, and the tasks Clear Finished hid. Hiding changes
 * nothing on disk; an active task is never hidden (it shows again as soon as it runs, e.g. a re-run).
 */
export class TaskFilter extends Disposable {
  private readonly changed = this._register(new Emitter<void>());
  readonly onDidChange = this.changed.event;
  private shown: Set<TaskCategory>;
  private readonly hidden: Set<string>;

  constructor(private readonly memento: vscode.Memento) {
    super();
    const saved = memento.get<string[]>(SHOWN_KEY);
    this.shown = new Set((saved ?? DEFAULT_SHOWN).filter((c): c is TaskCategory => (ALL as string[]).includes(c)));
    this.hidden = new Set(memento.get<string[]>(HIDDEN_KEY) ?? []);
  }

  visible(s: TaskSummary): boolean {
    const category = categoryOf(s);
    if (this.hidden.has(s.id) && category !== 'active' && category !== 'question') return this.shown.has('hidden');
    return this.shown.has(category);
  }

  get categories(): readonly TaskCategory[] {
    return ALL;
  }

  isShown(category: TaskCategory): boolean {
    return this.shown.has(category);
  }

  /** True when some task may be left out (a category unchecked). */
  get filtering(): boolean {
    return DEFAULT_SHOWN.some((c) => !this.shown.has(c));
  }

  hiddenCount(listed: readonly TaskSummary[]): number {
    return listed.filter((s) => this.isHidden(s)).length;
  }

  /** Hidden by Clear Finished (an active task never is): counted under "Cleared", not under its own category. */
  isHidden(s: TaskSummary): boolean {
    return this.hidden.has(s.id) && !isActive(s.observed);
  }

  async show(categories: readonly TaskCategory[]): Promise<void> {
    this.shown = new Set(categories);
    await this.memento.update(SHOWN_KEY, [...this.shown]);
    this.changed.fire();
  }

  async hide(ids: readonly string[], listed: readonly TaskSummary[]): Promise<void> {
    for (const id of ids) this.hidden.add(id);
    // Forget ids no longer listed (removed tasks): the saved set stays the size of the task list at most.
    const known = new Set(listed.map((s) => s.id));
    for (const id of this.hidden) if (!known.has(id)) this.hidden.delete(id);
    await this.memento.update(HIDDEN_KEY, [...this.hidden]);
    this.changed.fire();
  }

  /** Stamp of the current filter, part of the tree's shape (a change re-reads the root). */
  get stamp(): string {
    return `${[...this.shown].sort().join(',')}|${this.hidden.size}`;
  }
}

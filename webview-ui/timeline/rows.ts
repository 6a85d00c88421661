// How one row of the timeline looks: its classes and the texts of its four cells, computed without any DOM (unit
// tests), then written into a pooled element. Every string that came from an agent goes in as textContent, never as
// markup; classes are built only from the host's fixed vocabulary (codicon names, tones, event types).
import type { TimelineRow } from '../../src/extension/timeline/messages';

export interface RowView {
  className: string;
  iconClass: string;
  time: string;
  label: string;
  duration: string;
  selected: boolean;
}

const SAFE_CLASS = /^[a-z0-9_-]*$/;

/** A class name part from the host; anything outside the vocabulary is dropped rather than written into `class`. */
function safeClass(part: string): string {
  return SAFE_CLASS.test(part) ? part : '';
}

export function formatTime(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString([], { hour12: false });
}

/** The view of a row at a position of the list; `row` undefined: its data is on its way from the host. */
export function rowView(row: TimelineRow | undefined, selected: boolean): RowView {
  if (!row) return { className: 'row pending', iconClass: 'codicon icon', time: '', label: '…', duration: '', selected };
  const tone = safeClass(row.tone) || 'plain';
  return {
    className: `row tone-${tone} type-${safeClass(row.type)}${selected ? ' selected' : ''}`,
    iconClass: `codicon icon codicon-${safeClass(row.icon)}${row.running ? ' codicon-modifier-spin' : ''}`,
    time: formatTime(row.at),
    label: row.label,
    duration: row.running ? 'running' : (row.duration ?? ''),
    selected,
  };
}

/** The part of an element a row writes (an HTMLElement, or a fake of it in tests). */
export interface RowElement {
  className: string;
  id: string;
  hidden: boolean;
  dataset: Record<string, string | undefined>;
  style: { transform: string };
  setAttribute(name: string, value: string): void;
  readonly children: ArrayLike<{ className: string; textContent: string | null }>;
}

/** Writes a row view into a pooled row element (cells: time, icon, label, duration). */
export function applyRowView(el: RowElement, view: RowView, position: number, offsetPx: number): void {
  el.hidden = false;
  el.dataset.index = String(position);
  el.id = `row-${position}`;
  el.style.transform = `translateY(${offsetPx}px)`;
  el.className = view.className;
  el.setAttribute('aria-selected', String(view.selected));
  const [time, icon, label, duration] = [el.children[0]!, el.children[1]!, el.children[2]!, el.children[3]!];
  time.textContent = view.time;
  icon.className = view.iconClass;
  label.textContent = view.label;
  duration.textContent = view.duration;
}

/** A row element with its four cells (created once, reused while scrolling). */
export function makeRowElement(doc: Document): HTMLDivElement {
  const el = doc.createElement('div');
  el.className = 'row';
  el.setAttribute('role', 'option');
  for (const cls of ['time', 'codicon icon', 'label', 'dur']) {
    const span = doc.createElement('span');
    span.className = cls;
    el.appendChild(span);
  }
  return el;
}

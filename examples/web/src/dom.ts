/** The few DOM helpers the views share. */

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`index.html has no #${id}`);
  return el as T;
}

/** A table row of text cells, plus any elements given. */
export function row(...cells: (string | number | Node)[]): HTMLTableRowElement {
  const tr = document.createElement('tr');
  for (const content of cells) {
    const td = document.createElement('td');
    td.append(typeof content === 'number' ? String(content) : content);
    tr.append(td);
  }
  return tr;
}

/** A one-cell row spanning the table, for "nothing here" and "loading". */
export function messageRow(text: string, columns: number): HTMLTableRowElement {
  const tr = document.createElement('tr');
  const td = document.createElement('td');
  td.colSpan = columns;
  td.className = 'empty';
  td.textContent = text;
  tr.append(td);
  return tr;
}

export function statusBadge(status: string): HTMLSpanElement {
  const span = document.createElement('span');
  span.className = `status status-${status}`;
  span.textContent = status;
  return span;
}

/**
 * Runs one user action: its button is disabled meanwhile, a success clears an earlier message,
 * and a failure is shown.
 */
export type Act = (button: HTMLButtonElement | null, work: () => Promise<void>) => Promise<void>;

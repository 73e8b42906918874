import Table from 'cli-table3';
import { terminalSafe } from './terminal-text';

export type Cell = string | number | null | undefined;

/** Columns separated by two spaces, no borders and no colours: readable, and easy to grep or cut. */
const PLAIN = {
  chars: {
    top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
    bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
    left: '', 'left-mid': '', mid: '', 'mid-mid': '',
    right: '', 'right-mid': '', middle: '  ',
  },
  style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
};

const cellText = (value: Cell) => (value === null || value === undefined || value === '' ? '-' : terminalSafe(String(value)));

/** A table with a header row; each line ends without trailing spaces. */
export function renderTable(head: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const table = new Table({ ...PLAIN, head: [...head] });
  for (const row of rows) table.push(row.map(cellText));
  return trimLines(table.toString());
}

/** One record as "label  value" lines. */
export function renderFields(fields: readonly (readonly [string, Cell])[]): string {
  const table = new Table(PLAIN);
  for (const [label, value] of fields) table.push([label, cellText(value)]);
  return trimLines(table.toString());
}

function trimLines(text: string): string {
  return `${text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')}\n`;
}

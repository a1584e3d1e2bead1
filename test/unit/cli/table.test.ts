import { describe, expect, it } from 'vitest';
import { formatFields, formatTable, printable } from '../../../services/cli/table.js';

describe('formatTable', () => {
  it('pads columns to the widest cell, right-aligns numbers on request, trims line ends', () => {
    const text = formatTable(
      [{ header: 'NAME' }, { header: 'N', align: 'right' }, { header: 'NOTE' }],
      [
        ['calls', 12, 'ok'],
        ['dlq', 3, null],
      ],
    );
    expect(text).toBe(['NAME    N  NOTE', '-----  --  ----', 'calls  12  ok', 'dlq     3  -', ''].join('\n'));
  });

  it('prints the header and rule alone for no rows', () => {
    expect(formatTable([{ header: 'A' }, { header: 'BB' }], [])).toBe('A  BB\n-  --\n');
  });

  it('cuts long cells to the column maximum with an ellipsis', () => {
    const text = formatTable([{ header: 'R', maxWidth: 6 }], [['abcdefghij'], ['abc']]);
    expect(text.split('\n')).toEqual(['R', '------', 'abcde…', 'abc', '']);
  });

  it('keeps every row on one line and escapes terminal control sequences', () => {
    const text = formatTable([{ header: 'REASON' }], [['line1\nline2\t\u001b[31mred\u001b[0m \u202eevil']]);
    expect(text).toContain('line1\\nline2\\t\\x1b[31mred\\x1b[0m \\u{202e}evil');
    expect(text.split('\n')).toHaveLength(4);
    expect(text).not.toContain('\u001b');
  });
});

describe('formatFields', () => {
  it('aligns labels and indents continuation lines', () => {
    expect(
      formatFields([
        ['state', 'open'],
        ['note', 'one\ntwo'],
        ['resolution', null],
      ]),
    ).toBe(['state:       open', 'note:        one', '             two', 'resolution:  -', ''].join('\n'));
  });
});

describe('printable', () => {
  it('leaves ordinary text, including non-ASCII, alone', () => {
    expect(printable('Zoë — O-5512 → ✓')).toBe('Zoë — O-5512 → ✓');
  });
});

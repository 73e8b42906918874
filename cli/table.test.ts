import { renderFields, renderTable } from './table';

describe('renderTable', () => {
  test('when given rows, then columns are padded to the widest cell, two spaces apart, without borders or trailing spaces', () => {
    expect(renderTable(['ID', 'EMAIL', 'KEYS'], [[1, 'a@example.com', 3], [12, 'b@x.io', 10]])).toBe(
      ['ID  EMAIL          KEYS', '1   a@example.com  3', '12  b@x.io         10', ''].join('\n'),
    );
  });

  test('when a cell is null, undefined or empty, then it shows "-"', () => {
    expect(renderTable(['A', 'B', 'C'], [[null, undefined, '']])).toBe('A  B  C\n-  -  -\n');
  });

  test('when a cell holds wide characters, then the columns still line up on screen', () => {
    expect(renderTable(['NAME', 'N'], [['字字', 1], ['ab', 2]])).toBe('NAME  N\n字字  1\nab    2\n');
  });

  test('when a cell holds an escape sequence or a line break, then it is escaped and the row stays one line', () => {
    expect(renderTable(['NAME'], [['x\u001b[2Jy\nz']])).toBe('NAME\nx\\u{1b}[2Jy\\u{a}z\n');
  });

  test('when there are no rows, then the header alone', () => {
    expect(renderTable(['ID', 'EMAIL'], [])).toBe('ID  EMAIL\n');
  });
});

describe('renderFields', () => {
  test('when given fields, then one "label  value" line each, labels padded', () => {
    expect(renderFields([['id', 7], ['suspended at', null], ['email', 'a@b.c']])).toBe('id            7\nsuspended at  -\nemail         a@b.c\n');
  });
});

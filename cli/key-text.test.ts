import { isWholeKey, redactKeys } from './key-text';

const KEY = 'asg_stag_Xk29fQv1mZrT0c8sYw4LbJ2nHq6pDe3uKa5gVi7oNf-';

describe('isWholeKey', () => {
  test('when given a whole key (spaces around it or not), then true', () => {
    expect(isWholeKey(KEY)).toBe(true);
    expect(isWholeKey(` ${KEY}\n`)).toBe(true);
  });

  test.each(['asg_prod_', 'asg_prod_Xk29fQ', 'key_QyvCRbW2FEiJXwwV', `x${KEY}`, 'asg_test_Xk29fQv1mZrT0c8'])('when given %p (a prefix, an id, not only a key), then false', (value) => {
    expect(isWholeKey(value)).toBe(false);
  });
});

describe('redactKeys', () => {
  test('when a text holds whole keys, then each is cut to its visible prefix; prefixes and ids stay', () => {
    expect(redactKeys(`unknown option '--key=${KEY}' and ${KEY.replace('stag', 'prod')}; see asg_prod_Xk29fQ, key_abc`)).toBe(
      "unknown option '--key=asg_stag_Xk29fQ…(redacted)' and asg_prod_Xk29fQ…(redacted); see asg_prod_Xk29fQ, key_abc",
    );
  });
});

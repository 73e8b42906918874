import { cpuGeneration } from './machine';

const FIRST_EPYC = 'processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 1\nmodel name\t: AMD EPYC\n';
const THIRD_EPYC = FIRST_EPYC.replace('23', '25');

describe('cpuGeneration', () => {
  test('when the kernel mitigates Retbleed, then the family, the model and the mitigation are named', () => {
    expect(cpuGeneration(FIRST_EPYC, { Retbleed: 'Mitigation: untrained return thunk; SMT disabled\n', SRSO: 'Not affected\n' })).toBe(
      'family 23, model 1; Retbleed: Mitigation: untrained return thunk; SMT disabled',
    );
  });

  test('when the kernel returns safely against SRSO, then that is named after the model', () => {
    expect(cpuGeneration(THIRD_EPYC, { Retbleed: 'Not affected\n', SRSO: 'Vulnerable: Safe RET, no microcode\n' })).toBe(
      'family 25, model 1; SRSO: Vulnerable: Safe RET, no microcode',
    );
  });

  test('when the CPU is not affected, then only the family and the model are named', () => {
    expect(cpuGeneration(THIRD_EPYC, { Retbleed: 'Not affected\n', SRSO: 'Not affected\n' })).toBe('family 25, model 1');
  });

  test('when /proc and /sys say nothing, then nothing is named', () => {
    expect(cpuGeneration('', { Retbleed: '', SRSO: '' })).toBe('');
  });
});

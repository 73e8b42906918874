import { createLocalRevocationBus } from './revocation-bus';

describe('local revocation bus', () => {
  test('when a hash is published, then every subscriber has it before publish resolves', async () => {
    const bus = createLocalRevocationBus();
    const a: string[] = [];
    const b: string[] = [];
    bus.subscribe((h) => a.push(h));
    bus.subscribe((h) => b.push(h));
    await bus.publish('f'.repeat(64));
    expect(a).toEqual(['f'.repeat(64)]);
    expect(b).toEqual(['f'.repeat(64)]);
  });

  test('when a subscriber unsubscribes, then it hears nothing more', async () => {
    const bus = createLocalRevocationBus();
    const heard: string[] = [];
    const unsubscribe = bus.subscribe((h) => heard.push(h));
    unsubscribe();
    await bus.publish('a'.repeat(64));
    expect(heard).toEqual([]);
  });

  test('when one subscriber throws, then the others still hear the message and publish reports the failure', async () => {
    const bus = createLocalRevocationBus();
    const heard: string[] = [];
    bus.subscribe(() => {
      throw new Error('broken listener');
    });
    bus.subscribe((h) => heard.push(h));
    await expect(bus.publish('b'.repeat(64))).rejects.toThrow('A revocation listener failed');
    expect(heard).toEqual(['b'.repeat(64)]);
  });
});

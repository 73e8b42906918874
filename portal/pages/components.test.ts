import { codeSamples } from './components';

describe('code samples as the server renders them', () => {
  test('when a page is read without JavaScript, then the curl sample continues each line with a backslash, as the script draws it', () => {
    const bases = { production: 'http://localhost:8080/v1', staging: 'http://localhost:8080/staging/v1' };
    const page = codeSamples({ id: 's', label: 'Request', method: 'POST', path: '/messages', body: { message: 'hi' }, bases }).value;
    const curl = /<code>([^<]*)<\/code>/.exec(page)![1]!;
    expect(curl.split('\n')).toEqual([
      'curl -X POST &#39;http://localhost:8080/v1/messages&#39; \\',
      '     -H &quot;Authorization: Bearer $ASG_KEY&quot; \\',
      '     -H &#39;Content-Type: application/json&#39; \\',
      '     -d &#39;{&quot;message&quot;:&quot;hi&quot;}&#39;',
    ]);
  });
});

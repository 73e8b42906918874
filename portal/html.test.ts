import { escapeHtml, html, raw, SafeHtml } from './html';

describe('html templates', () => {
  test('when text is interpolated, then markup and quotes are escaped', () => {
    const name = `<img src=x onerror="alert('x')">&`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</p>',
    );
  });

  test('when fragments, arrays, numbers and empty values are interpolated, then fragments stay markup and empties vanish', () => {
    const items = ['a<b', 'c'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul>0');
    expect(html`${raw('<br>')}`).toBeInstanceOf(SafeHtml);
    expect(String(html`${raw('<br>')}`)).toBe('<br>');
  });

  test('escapeHtml escapes exactly the five significant characters', () => {
    expect(escapeHtml(`&<>"'/\``)).toBe('&amp;&lt;&gt;&quot;&#39;/`');
  });
});

import test from 'ava';
import { domainOf, normalizeHttpUrl, normalizeUrl } from '../../../src/local/fetch/index.js';

test('normalizeUrl lower-cases scheme and host, drops default ports and fragments', (t) => {
  t.is(normalizeUrl('HTTP://Example.COM:80/Path#top'), 'http://example.com/Path');
  t.is(normalizeUrl('https://example.com:443/'), 'https://example.com/');
  t.is(normalizeUrl('https://example.com:8443/a'), 'https://example.com:8443/a');
  t.is(normalizeUrl('https://example.com./a'), 'https://example.com/a');
});

test('normalizeUrl drops tracking parameters and sorts the rest, keeping repeated values in order', (t) => {
  t.is(
    normalizeUrl('https://example.com/a?utm_source=x&b=2&gclid=1&a=1&fbclid=z&UTM_Campaign=y&b=1'),
    'https://example.com/a?a=1&b=2&b=1',
  );
  t.is(normalizeUrl('https://example.com/a?utm_medium=email'), 'https://example.com/a');
  t.is(normalizeUrl('https://example.com/a?q=a%20b&&p=c+d'), 'https://example.com/a?p=c+d&q=a%20b');
});

test('normalizeUrl keeps trailing-slash semantics and evens out percent-escapes', (t) => {
  t.is(normalizeUrl('https://example.com/docs'), 'https://example.com/docs');
  t.is(normalizeUrl('https://example.com/docs/'), 'https://example.com/docs/');
  t.is(normalizeUrl('https://example.com'), 'https://example.com/');
  t.is(normalizeUrl('https://example.com/%7euser/a%2fb/./c/../d'), 'https://example.com/~user/a%2Fb/d');
});

test('normalizeUrl resolves relative links; normalizeHttpUrl rejects what is not http(s)', (t) => {
  t.is(normalizeUrl('../b?y=1&x=2', 'https://example.com/a/c/d'), 'https://example.com/a/b?x=2&y=1');
  t.is(normalizeHttpUrl('mailto:someone@example.com'), null);
  t.is(normalizeHttpUrl('javascript:void(0)', 'https://example.com/'), null);
  t.is(normalizeHttpUrl('not a url'), null);
  t.is(normalizeHttpUrl(' /x ', 'https://example.com/'), 'https://example.com/x');
  t.throws(() => normalizeUrl('not a url'), { instanceOf: TypeError });
});

test('domainOf is the lower-case host without www.', (t) => {
  t.is(domainOf('https://WWW.Example.com/x'), 'example.com');
  t.is(domainOf('https://docs.example.com/x'), 'docs.example.com');
  t.is(domainOf('https://www2.example.com/x'), 'www2.example.com');
});

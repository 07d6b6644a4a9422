import test from 'ava';
import iconv from 'iconv-lite';
import { decodeBytes, detectCharset, extractDocument } from '../../../src/local/extract/index.js';

const RUSSIAN = 'Москва — столица России, крупнейший по численности населения город страны. Здесь расположены органы государственной власти, театры и музеи.';
const JAPANESE = '東京は日本の首都であり、政治、経済、文化の中心地です。多くの人々がここで働き、暮らしています。';

function article(head: string, paragraph: string): string {
  return `<!doctype html><html><head>${head}<title>Статья</title></head><body><article><p>${paragraph}</p><p>${paragraph}</p></article></body></html>`;
}

test('a windows-1251 page declared only in <meta charset> decodes', async (t) => {
  const bytes = iconv.encode(article('<meta charset="windows-1251">', RUSSIAN), 'windows-1251');
  t.is(detectCharset(bytes, 'text/html'), 'windows-1251');
  const extracted = await extractDocument(bytes, { url: 'https://ru.example/a', contentType: 'text/html' });
  t.true(extracted.text.includes('столица России'));
});

test('a Shift_JIS page declared only in a http-equiv <meta> decodes', async (t) => {
  const html = article('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">', JAPANESE);
  const bytes = iconv.encode(html, 'Shift_JIS');
  const extracted = await extractDocument(bytes, { url: 'https://jp.example/a', contentType: null });
  t.true(extracted.text.includes('東京は日本の首都'));
  t.is(extracted.language, 'ja');
});

test('a page with no declaration at all is detected from its bytes', async (t) => {
  const bytes = iconv.encode(article('', `${RUSSIAN} ${RUSSIAN}`), 'windows-1251');
  t.is(detectCharset(bytes, 'text/html'), 'windows-1251');
  const extracted = await extractDocument(bytes, { url: 'https://ru.example/b', contentType: 'text/html' });
  t.true(extracted.text.includes('крупнейший по численности'));
});

test('undeclared valid UTF-8 stays UTF-8, and the header and a BOM outrank <meta>', (t) => {
  const utf8 = Buffer.from(article('', RUSSIAN), 'utf8');
  t.is(detectCharset(utf8, null), 'utf-8');
  const koi8 = iconv.encode(article('<meta charset="utf-8">', RUSSIAN), 'koi8-r');
  t.is(detectCharset(koi8, 'text/html; charset=KOI8-R'), 'koi8-r');
  t.true(decodeBytes(koi8, 'text/html; charset="koi8-r"').includes('Москва'));
  const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(article('<meta charset="windows-1251">', RUSSIAN))]);
  t.is(detectCharset(withBom, 'text/html; charset=windows-1251'), 'utf-8');
  t.false(decodeBytes(withBom, null).startsWith('\ufeff'));
  // The HTML standard reads a Latin-1 label as windows-1252, which has curly quotes.
  t.is(decodeBytes(Buffer.from([0x93, 0x68, 0x69, 0x94]), 'text/plain; charset=iso-8859-1'), '\u201chi\u201d');
});

// decodeBytes reads UTF-8 with Node's decoder instead of iconv-lite's stream decoder: the text must
// be the same, replacement characters and the dropped byte-order mark included.
test('UTF-8 decodes as iconv-lite decodes it: broken, cut-off and overlong sequences, surrogates, a byte-order mark', (t) => {
  const samples = [
    [0xef, 0xbb, 0xbf, 0x3c, 0x70, 0x3e, 0xc3, 0xa9, 0x3c, 0x2f, 0x70, 0x3e],
    [0x61, 0xff, 0x62, 0xc3, 0x28, 0x63, 0xe2, 0x82, 0x64],
    [0x61, 0xe2, 0x82],
    [0xf0, 0x9f, 0x98],
    [0xc0, 0xaf, 0xe0, 0x80, 0xaf, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0x7a],
    [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x61],
    [...Buffer.from('日本語のテキスト ✓ 😀', 'utf8')],
  ].map((bytes) => Uint8Array.from(bytes));
  for (const bytes of samples) {
    for (const contentType of ['text/html; charset=utf-8', 'text/html; charset=UTF8']) {
      t.is(decodeBytes(bytes, contentType), iconv.decode(Buffer.from(bytes), 'utf-8'), `${Buffer.from(bytes).toString('hex')} as ${contentType}`);
    }
  }
  t.is(decodeBytes(samples[0]!, null), '<p>é</p>');
});

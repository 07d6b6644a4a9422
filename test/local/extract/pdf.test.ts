import test from 'ava';
import { extractDocument, extractPdf } from '../../../src/local/extract/index.js';
import { buildPdf } from './pdf-fixture.js';

const PDF = buildPdf('Annual Report 2023', [
  ['Revenue grew by twelve percent over the year.', 'Costs fell in every region.'],
  ['The board proposes a dividend of (two) euros per share.'],
]);

test('a PDF becomes its title and text, page by page', async (t) => {
  const { title, text } = await extractPdf(PDF);
  t.is(title, 'Annual Report 2023');
  t.is(text, 'Revenue grew by twelve percent over the year.\nCosts fell in every region.\n\nThe board proposes a dividend of (two) euros per share.');
});

test('extractDocument dispatches PDFs by content type and by their bytes', async (t) => {
  for (const contentType of ['application/pdf', null, 'application/octet-stream']) {
    const extracted = await extractDocument(PDF, { url: 'https://corp.example/report.pdf', contentType });
    t.is(extracted.title, 'Annual Report 2023', String(contentType));
    t.regex(extracted.text, /dividend of \(two\) euros/);
    t.false(extracted.isChallenge);
  }
});

test('plain text passes through, and binary types yield nothing', async (t) => {
  const text = await extractDocument(Buffer.from('Release notes\r\n\r\nVersion 2 fixes the importer.\r\n'), { url: 'https://x.example/notes.txt', contentType: 'text/plain; charset=utf-8' });
  t.is(text.title, 'Release notes');
  t.is(text.text, 'Release notes\n\nVersion 2 fixes the importer.');
  const image = await extractDocument(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]), { url: 'https://x.example/a.png', contentType: 'image/png' });
  t.is(image.text, '');
});

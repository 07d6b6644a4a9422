import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import test from 'ava';
import { parseDocument } from '../../../src/local/extract/dom.js';

// patches/linkedom+*.patch makes linkedom create a node's listener map on its first listener instead
// of in every node's constructor (the extraction benchmark's speed); events must work as before.
test('events on a parsed page still reach their listeners, and removing one that was never added is harmless', (t) => {
  const document = parseDocument('<html><body><div id="outer"><button id="inner">Go</button></div></body></html>') as unknown as {
    querySelector(selector: string): EventTargetLike;
    defaultView: { Event: new (type: string, init?: { bubbles?: boolean }) => unknown };
  };
  const outer = document.querySelector('#outer');
  const inner = document.querySelector('#inner');
  const { Event } = document.defaultView;
  const seen: string[] = [];
  const onInner = () => seen.push('inner');
  inner.removeEventListener('click', onInner);
  inner.addEventListener('click', onInner);
  outer.addEventListener('click', () => seen.push('outer'));
  inner.dispatchEvent(new Event('click', { bubbles: true }));
  t.deepEqual(seen, ['inner', 'outer']);
  inner.removeEventListener('click', onInner);
  inner.dispatchEvent(new Event('click', { bubbles: true }));
  t.deepEqual(seen, ['inner', 'outer', 'outer']);
});

test('the installed linkedom carries the patch: no listener map is made in a node constructor', (t) => {
  const require = createRequire(import.meta.url);
  const packageDirectory = require.resolve('linkedom/package.json').replace(/package\.json$/, '');
  for (const build of ['esm', 'cjs']) {
    const source = readFileSync(`${packageDirectory}${build}/interface/event-target.js`, 'utf8');
    const constructorBody = /constructor\(\) \{([^}]*)\}/.exec(source)?.[1] ?? '';
    t.false(constructorBody.includes('wm.set'), `${build}: run npm install (patch-package applies patches/)`);
    t.regex(source, /if \(!map\)\s*wm\.set\(this, map = new Map\)/);
  }
});

interface EventTargetLike {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
  dispatchEvent(event: unknown): boolean;
}

test('attribute names written in upper case are read as HTML reads them, in lower case', (t) => {
  const document = parseDocument('<html><body><DIV CLASS="nav" ID="menu"><A HREF="/next">Next</A></DIV></body></html>');
  const division = document.querySelector('div')!;
  t.is(division.className, 'nav');
  t.is(division.id, 'menu');
  t.is(document.querySelector('a[href]')?.getAttribute('href'), '/next');
  t.truthy(document.querySelector('.nav'));
});

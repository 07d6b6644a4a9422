import test from 'ava';
import { removeBoilerplateElements, removeOtherPostSections, removeTeaserArticles } from '../../../src/local/extract/boilerplate.js';
import { parseDocument } from '../../../src/local/extract/dom.js';

const ARTICLE = 'The council approved the new library budget after a long debate about opening hours and staffing. '.repeat(8);

/** An article with a reader's remark under it, classed as comments are; the same class string on every call. */
function page(): ReturnType<typeof parseDocument> {
  return parseDocument(
    `<html><body><main><article><h1>Library budget</h1><p>${ARTICLE}</p></article>` +
      '<div class="comment-body"><p>I walk past that library every day, and it is always full of people reading.</p></div></main></body></html>',
  );
}

const remarkKept = (document: ReturnType<typeof parseDocument>) => (document.body?.textContent ?? '').includes('I walk past that library');

test('class words exempt on one page type still mark boilerplate on the next page with the same classes', (t) => {
  // The words of a class string are remembered between pages; what one page's type exempts must not
  // be remembered with them.
  const before = page();
  removeBoilerplateElements(before);
  t.false(remarkKept(before), 'a comment is boilerplate on an article');

  const forum = page();
  removeBoilerplateElements(forum, { exemptWords: new Set(['comment']) });
  t.true(remarkKept(forum), 'on a forum "comment" marks the posts themselves');

  const after = page();
  removeBoilerplateElements(after);
  t.false(remarkKept(after), 'the forum page left no exemption behind');

  const exemptFirst = page();
  removeBoilerplateElements(exemptFirst, { exemptWords: new Set(['comment']) });
  t.true(remarkKept(exemptFirst));
});

test('the pre-clean with every article kept, then the teaser step, is the whole pre-clean', (t) => {
  // The extractor pre-cleans a page once, every article kept, copies it for a second path, and drops
  // the teasers on the article path only: that must leave what the whole pre-clean leaves.
  const html =
    `<html><body><nav><a href="/">Home</a></nav><main><article><h1>Library budget</h1><p>${ARTICLE}</p></article>` +
    '<article><h2><a href="/pool">Pool hours</a></h2><p>The pool opens an hour earlier from May.</p></article>' +
    '<div class="share-bar"><a href="/s">Share</a></div></main><footer>Town hall</footer></body></html>';
  const whole = parseDocument(html);
  removeBoilerplateElements(whole);
  const inTwoSteps = parseDocument(html);
  removeBoilerplateElements(inTwoSteps, { keepAllArticles: true });
  t.is(inTwoSteps.querySelectorAll('article').length, 2, 'every article kept by the first step');
  const copy = inTwoSteps.cloneNode(true);
  removeTeaserArticles(inTwoSteps);
  t.is(inTwoSteps.body?.innerHTML, whole.body?.innerHTML);
  t.is(inTwoSteps.querySelectorAll('article').length, 1, 'the teaser gone');
  t.is(whole.querySelector('nav, footer, .share-bar'), null);
  t.is(copy.querySelectorAll('article').length, 2, 'the copy for the region keeps it');
});

test('a heading over other posts goes with its list; a link so named, or a heading before any content, does not', (t) => {
  const list = '<ul><li><a href="/a">Bridge closed for repairs</a></li><li><a href="/b">New cycle lanes open</a></li></ul>';
  const content = (inner: string) => parseDocument(`<html><body><div id="content">${inner}</div></body></html>`).querySelector('#content')!;

  const headed = content(`<p>${ARTICLE}</p><h3>Related articles</h3>${list}`);
  t.true(removeOtherPostSections(headed));
  t.false((headed.textContent ?? '').includes('Bridge closed'));
  t.true((headed.textContent ?? '').includes('library budget'));

  // A forum's list of other threads under a thread.
  const thread = content(`<p>${ARTICLE}</p><h3>Similar threads</h3>${list}`);
  t.true(removeOtherPostSections(thread));
  t.false((thread.textContent ?? '').includes('Bridge closed'));

  // A menu's entry: the words are a link's, not a heading's.
  const linked = content(`<p>${ARTICLE}</p><h3><a href="/archive">Related articles</a></h3>${list}`);
  t.false(removeOtherPostSections(linked));
  t.true((linked.textContent ?? '').includes('Bridge closed'));

  // On a listing, only a list related to one post is not the listing's own.
  const listing = content(`<p>${ARTICLE}</p><h3>More stories</h3>${list}<p>${ARTICLE}</p><h3>Related articles</h3>${list.replace('Bridge', 'Harbour')}`);
  t.true(removeOtherPostSections(listing, { relatedOnly: true }));
  t.true((listing.textContent ?? '').includes('Bridge closed'));
  t.false((listing.textContent ?? '').includes('Harbour closed'));

  // A heading that opens the rest of a story's prose heads no list of posts, though it outweighs what comes before it.
  const opened = content(`<h2>Library budget</h2><p>The vote came late.</p><div><h3>More stories</h3><p>${ARTICLE}</p></div>`);
  t.false(removeOtherPostSections(opened));
  t.true((opened.textContent ?? '').includes('library budget after a long debate'));
  // A short post's list of related posts can be longer than the post.
  const short = content(`<p>The vote came late.</p><div><h3>Related posts</h3>${list}${list.replace(/Bridge/g, 'Harbour')}</div>`);
  t.true(removeOtherPostSections(short));
  t.false((short.textContent ?? '').includes('Bridge closed'));

  // Nothing comes before it: the list is what the content is.
  const first = content(`<h3>More stories</h3>${list}<p>${ARTICLE}</p>`);
  t.false(removeOtherPostSections(first));
  t.true((first.textContent ?? '').includes('Bridge closed'));
});

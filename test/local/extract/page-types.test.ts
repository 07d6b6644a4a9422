/**
 * Page-type-aware extraction on hand-written pages, one per structure: a forum thread, a Q&A page,
 * an article with comments under it, a product page with a specification table and JSON-LD, a
 * category grid, a documentation page with code and a table, a Chinese article.
 */
import test, { type ExecutionContext } from 'ava';
import { parseDocument, spaceAdjacentInlineWords } from '../../../src/local/extract/dom.js';
import { extractHtml, htmlToMarkdown } from '../../../src/local/extract/index.js';

const NAVIGATION = '<nav><a href="/">Home</a> <a href="/forums">Forums</a> <a href="/shop">Shop</a> <a href="/help">Help</a></nav>';
const FOOTER = '<footer><a href="/about">About us</a> <a href="/privacy">Privacy</a> © Example Ltd</footer>';

function page(head: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">${head}</head><body>${NAVIGATION}${body}${FOOTER}</body></html>`;
}

const POSTS = [
  ['marta_k', '2024-03-02T10:15:00Z', 'Mar 2, 2024', 'My sourdough starter stopped rising after I moved it to the cellar. It smells fine and has bubbles on top, but it no longer doubles in eight hours. Should I feed it more often or keep it warmer?'],
  ['breadhead', '2024-03-02T11:40:00Z', 'Mar 2, 2024', 'Cellars are often below fifteen degrees, which slows the yeast a lot. Keep it somewhere around twenty-four degrees for a few days and feed it twice a day; it should recover within a week.'],
  ['oven_spring', '2024-03-03T08:05:00Z', 'Mar 3, 2024', 'Also check the flour. A switch to a bleached flour can slow a starter down. A spoonful of whole rye in each feeding gives the culture more to eat and usually wakes it up.'],
  ['marta_k', '2024-03-05T19:30:00Z', 'Mar 5, 2024', 'Thank you both! I moved the jar on top of the fridge and added rye, and this morning it doubled in six hours again. The loaf I baked today had a lovely open crumb.'],
] as const;

function threadPost([author, iso, shown, text]: (typeof POSTS)[number], index: number): string {
  return `<article class="message message--post${index === 0 ? ' is-first' : ''}" id="post-${index + 1}">
    <header class="message-attribution"><a class="username" href="/members/${author}">${author}</a>
    <time datetime="${iso}">${shown}</time> <a href="#post-${index + 1}">#${index + 1}</a></header>
    <div class="message-body">${index === 1 ? `<blockquote>${POSTS[0][0]} said: ${POSTS[0][3]}</blockquote>` : ''}<p>${text}</p></div>
    <div class="message-actions"><a href="/reply">Reply</a> <a href="/report">Report</a></div>
  </article>`;
}

const THREAD = page(
  '<title>Starter stopped rising | Baking Forum</title>',
  `<main><h1>Starter stopped rising</h1><div class="thread-posts">${POSTS.map(threadPost).join('')}</div></main>
   <aside><h3>Similar threads</h3><a href="/t/1">Rye starter smells of acetone</a></aside>`,
);

test('a forum thread is detected and keeps every post with its author and date lines', (t) => {
  const extracted = extractHtml(THREAD, 'https://bakers.example/threads/starter-stopped-rising.42/');
  t.is(extracted.pageType, 'forum');
  for (const [author, , shown, text] of POSTS) {
    t.true(extracted.text.includes(text), `post of ${author} kept`);
    t.regex(extracted.text, new RegExp(`${author}\\s+${shown}`));
  }
  t.notRegex(extracted.text, /Similar threads|Privacy|acetone/);
  // The second post quotes the first: the quote repeats it and goes, the first post stays once.
  t.is(extracted.text.split(POSTS[0][3]).length - 1, 1);
  t.notRegex(extracted.text, /said:/);
});

test("a post's signature, repeated under each of its author's posts, stays out of the thread", (t) => {
  const signature = '<div class="signature">Baking since 1998 · my starter is older than my car · no DMs please</div>';
  const withSignatures = THREAD.replace(/<div class="message-actions">/g, `${signature}<div class="message-actions">`);
  const extracted = extractHtml(withSignatures, 'https://forum.example/threads/starter-stopped-rising.42/');
  t.is(extracted.pageType, 'forum');
  for (const [, , , text] of POSTS) t.true(extracted.text.includes(text));
  t.false(extracted.text.includes('Baking since 1998'));
});

test("a member's figures beside each post stay out; the author's name and the post's date stay in", (t) => {
  const figures = '<dl class="pairs"><dt>Joined</dt><dd>Jan 4, 2019</dd><dt>Messages</dt><dd>1,204</dd><dt>Location</dt><dd>Bristol</dd></dl>';
  const withFigures = THREAD.replace(/<div class="message-body">/g, `${figures}<div class="message-body">`);
  const extracted = extractHtml(withFigures, 'https://forum.example/threads/starter-stopped-rising.42/');
  t.is(extracted.pageType, 'forum');
  for (const [author, , shown, text] of POSTS) {
    t.true(extracted.text.includes(text));
    t.true(extracted.text.includes(author));
    t.true(extracted.text.includes(shown));
  }
  t.false(extracted.text.includes('Messages'));
  t.false(extracted.text.includes('Bristol'));
});

/** The thread with each match of `pattern` replaced, extracted (see extractedThread). */
function threadWith(t: ExecutionContext, pattern: RegExp, replacement: string): string {
  return extractedThread(t, THREAD.replace(pattern, replacement));
}

/** The thread's page, changed, extracted: every post must stay, with its author and date line. */
function extractedThread(t: ExecutionContext, html: string): string {
  const extracted = extractHtml(html, 'https://forum.example/threads/starter-stopped-rising.42/');
  t.is(extracted.pageType, 'forum');
  for (const [author, , shown, text] of POSTS) {
    t.true(extracted.text.includes(text));
    t.regex(extracted.text, new RegExp(`${author}\\s+${shown}`));
  }
  return extracted.text;
}
const BEFORE_BODY = /<div class="message-body">/g;

test("a member's figures written as lines (Posts: 1,204) stay out, as in a definition list", (t) => {
  const figures = '<div class="poster-info"><span>Posts: 1,204</span> <span>Joined: Jan 2019</span> <span>Reaction score: 310</span></div>';
  t.notRegex(threadWith(t, BEFORE_BODY, `${figures}<div class="message-body">`), /Posts: 1,204|Joined: Jan|Reaction score/);
});

test('the actions under each post (reply, quote, report, a like count) stay out', (t) => {
  const actions = '<ul class="post-controls"><li><span>Reply</span></li><li><button type="button">Quote</button></li><li><span>Report</span></li><li><span>3 Likes</span></li></ul>';
  t.notRegex(threadWith(t, /<div class="message-actions">.*?<\/div>/g, actions), /\b(Reply|Quote|Report|3 Likes)\b/);
});

test("a post's edit note stays out; a post that starts with the same words stays in", (t) => {
  const notes = [
    '<div class="message-lastEdit">Last edited: <time datetime="2024-03-06T09:00:00Z">Mar 6, 2024</time></div>',
    '<div class="notice">Last edited by marta_k on Wed Mar 06, 2024 9:00 am, edited 2 times in total.</div>',
    '<p class="lastedit"><em>Last edited by marta_k (2024-03-06 09:00:12)</em></p>',
  ];
  let index = 0;
  const withNotes = THREAD.replace(/<div class="message-actions">/g, (actions) => `${notes[index++ % notes.length]}${actions}`);
  t.notRegex(extractedThread(t, withNotes), /Last edited/);
  // Without a date it is no note: a post may open with those words.
  const post = 'Last edited this recipe for the third time, and the loaf finally rose.';
  t.true(threadWith(t, /<div class="message-actions">/, `<p>${post}</p><div class="message-actions">`).includes(post));
});

test("a post's bare counts (its score, its number in the thread, its likes) stay out; a number in a sentence or after its label stays", (t) => {
  const counts = '<div class="vote-count">12</div><div class="reactions"><span class="like-count">3</span></div>';
  const sentence = 'The loaf rose within <strong>36</strong> hours at <a href="/wiki/proofing">24</a> degrees.';
  const figure = '<dd class="profile-posts"><strong>Posts:</strong> <a href="/search?author=1">722</a></dd>';
  const text = threadWith(t, BEFORE_BODY, `${counts}<dl>${figure}</dl><div class="message-body"><p>${sentence}</p>`);
  t.notRegex(text, /^\s*(12|3)\s*$/m);
  // Each post's number after its date ("#2"), a link to the post.
  t.notRegex(text, /#\d/);
  t.true(text.includes('The loaf rose within 36 hours at 24 degrees.'), text);
  t.regex(text, /Posts: 722/);
});

test("a <noscript> note in a thread stays out, as a browser with scripts shows none of it", (t) => {
  const note = '<noscript><p>Please enable JavaScript to see reactions and the live reply count of this post.</p></noscript>';
  t.notRegex(threadWith(t, /<div class="message-actions">/g, `${note}<div class="message-actions">`), /enable JavaScript/);
});

test("a member's rank and badges beside each post stay out; the author's name and the post's date stay in", (t) => {
  const ranks = '<div class="message-userDetails"><h5 class="userTitle message-userTitle">Well-known member</h5><div class="userBanner">Supporter</div></div>';
  t.notRegex(threadWith(t, BEFORE_BODY, `${ranks}<div class="message-body">`), /Well-known member|Supporter/);
});

test('posts inside a form without controls (a moderation form) stay; a reply form with a text box goes', (t) => {
  const lastPost = threadPost(POSTS[3], 3);
  const moderated = THREAD.replace(lastPost, `<form action="/inline-mod" method="post"><input type="hidden" name="token" value="abc123">${lastPost}</form>
    <form action="/reply" method="post"><p>Please be kind and stay on topic when you answer in this thread, our moderators read every post.</p>
    <textarea name="message"></textarea><button>Post reply</button></form>`);
  const extracted = extractHtml(moderated, 'https://forum.example/threads/starter-stopped-rising.42/');
  t.is(extracted.pageType, 'forum');
  for (const [, , , text] of POSTS) t.true(extracted.text.includes(text));
  t.false(extracted.text.includes('Please be kind'));
});

test('a thread whose site declares og:type article is still a thread when it has next to no prose of its own', (t) => {
  const declared = THREAD.replace('<title>', '<meta property="og:type" content="article"><title>');
  const extracted = extractHtml(declared, 'https://bakers.example/threads/starter-stopped-rising.42/');
  t.is(extracted.pageType, 'forum');
  for (const [author, , shown, text] of POSTS) {
    t.true(extracted.text.includes(text));
    t.regex(extracted.text, new RegExp(`${author}\\s+${shown}`));
  }
  // An article that declares itself so keeps its type, with the same posts as its comments.
  const story = Array.from({ length: 4 }, (_, index) => `<p>${'The bakery on the corner has kept one sourdough culture alive since it opened, feeding it every morning before dawn. '.repeat(2)} Part ${index + 1}.</p>`).join('');
  const article = declared.replace('<main><h1>Starter stopped rising</h1>', `<main><h1>Starter stopped rising</h1><div class="story">${story}</div>`);
  t.is(extractHtml(article, 'https://bakers.example/news/starter/').pageType, 'article');
});

test('a threaded discussion, each item a fold toggle, its comment and the replies under it, is a thread', (t) => {
  const comments = [
    ['ana', '2024-08-12T11:00:00Z', 'The goals read well, but I would like to see how progress on each one is reported during the year.'],
    ['bo', '2024-08-12T12:30:00Z', 'There is a tracking page for each goal, updated monthly by its owner, linked from the blog post itself.'],
    ['cy', '2024-08-13T09:10:00Z', 'Monthly updates are a good start; a short summary at the end of each half would help outsiders a lot.'],
  ] as const;
  const item = ([name, iso, text]: (typeof comments)[number], index: number) => `<li class="subtree">
    <input id="fold-${index}" class="fold" type="checkbox">
    <div class="comment" id="c-${index}"><div class="details"><a href="/~${name}">${name}</a>
      <time datetime="${iso}">${iso.slice(0, 10)}</time></div><div class="comment-text"><p>${text}</p></div></div>
    <ol class="replies"></ol></li>`;
  const html = page(
    '<meta property="og:type" content="article"><title>Project goals for 2024 | Links</title>',
    `<main><div class="story"><a href="https://blog.example/goals">Project goals for 2024</a> <span>blog.example</span></div>
     <ol class="thread">${comments.map(item).join('')}</ol></main>`,
  );
  const extracted = extractHtml(html, 'https://links.example/s/abc123/project_goals_for_2024');
  t.is(extracted.pageType, 'forum');
  for (const [name, , text] of comments) {
    t.true(extracted.text.includes(text), `comment of ${name} kept`);
    t.true(extracted.text.includes(name));
  }
});

test('a quote of text that is not on the page stays in the post that quotes it', (t) => {
  const quoted = 'Feed the starter at a ratio of one part starter to five parts flour and water when the kitchen is warm.';
  const thread = THREAD.replace('<p>Thank you both!', `<blockquote>${quoted}</blockquote><p>Thank you both!`);
  t.true(extractHtml(thread, 'https://bakers.example/threads/starter-stopped-rising.42/').text.includes(quoted));
});

const QUESTION_PAGE = page(
  `<title>How do I undo the last commit?</title><script type="application/ld+json">${JSON.stringify({
    '@context': 'https://schema.org',
    '@type': 'QAPage',
    mainEntity: { '@type': 'Question', name: 'How do I undo the last commit?', answerCount: 2 },
  })}</script>`,
  `<div id="content"><h1>How do I undo the last commit?</h1>
   <div class="question"><p>I committed the wrong files to my local branch and have not pushed yet. How can I take the commit back and keep my changes in the working tree?</p>
     <div class="user-info">asked <span class="relativetime">Jan 4, 2023</span> by <a href="/u/1">newcomer</a></div></div>
   <div class="answer"><p>Use a soft reset to move the branch back one commit while keeping the changes staged: the files stay exactly as they are in your working tree.</p>
     <div class="user-info">answered <span class="relativetime">Jan 4, 2023</span> by <a href="/u/2">gitfan</a></div></div>
   <div class="answer"><p>If you want the changes unstaged as well, a mixed reset does that. Both only rewrite history that you have not shared, so they are safe before a push.</p>
     <div class="user-info">answered <span class="relativetime">Jan 5, 2023</span> by <a href="/u/3">historian</a></div></div></div>`,
);

/** The question page (or a variant of it) extracted: a thread keeping the question and both answers. */
function questionPageText(t: ExecutionContext, html: string): string {
  const extracted = extractHtml(html, 'https://qa.example/questions/7/undo-last-commit');
  t.is(extracted.pageType, 'forum');
  t.regex(extracted.text, /committed the wrong files/);
  t.regex(extracted.text, /Use a soft reset/);
  t.regex(extracted.text, /a mixed reset does that/);
  return extracted.text;
}

test('a Q&A page declared in JSON-LD keeps the question and every answer', (t) => {
  t.regex(questionPageText(t, QUESTION_PAGE), /answered Jan 5, 2023 by historian/);
});

test("a Q&A page whose answers outweigh its question keeps the question, marked up as the schema.org Question's text", (t) => {
  const question = 'I committed the wrong files and have not pushed. How do I take the commit back?';
  const answer = (text: string, author: string) =>
    `<div class="answer" itemprop="suggestedAnswer" itemscope itemtype="https://schema.org/Answer"><div itemprop="text"><p>${text} ${text} ${text}</p></div>` +
    `<div class="user-info">answered <time datetime="2023-01-04">Jan 4, 2023</time> by <a href="/u/${author}">${author}</a></div></div>`;
  const html = page(
    '<title>How do I undo the last commit?</title>',
    `<main itemscope itemtype="https://schema.org/QAPage"><div itemprop="mainEntity" itemscope itemtype="https://schema.org/Question">
       <h1 itemprop="name">How do I undo the last commit?</h1>
       <div class="question"><div itemprop="text"><p>${question}</p></div></div>
       <div id="answers">${answer('Use a soft reset to move the branch back one commit while the changes stay staged.', 'gitfan')}
         ${answer('A mixed reset does the same and leaves the changes unstaged in the working tree.', 'historian')}
         ${answer('Either way, only rewrite history that nobody else has fetched from you yet.', 'careful')}</div></div></main>`,
  );
  const extracted = extractHtml(html, 'https://qa.example/questions/7/undo-last-commit');
  t.is(extracted.pageType, 'forum');
  t.true(extracted.text.includes(question), extracted.text);
  for (const text of ['Use a soft reset', 'A mixed reset', 'Either way']) t.true(extracted.text.includes(text));
});

const QUESTION_COMMENT = 'Did you push the branch already? That changes the answer.';
const ANSWER_COMMENT = 'Worth adding that the reflog still has the commit afterwards.';

test("a Q&A thread's comments under the question and the answers are left out; a forum whose replies are classed comments keeps them", (t) => {
  const comments = (text: string, author: string) =>
    `<div class="comments js-comments-container"><ul class="comments-list"><li class="comment"><span class="comment-copy">${text}</span> – <a href="/u/${author}">${author}</a> <span class="relativetime">Jan 4, 2023</span></li></ul></div>`;
  const withComments = QUESTION_PAGE.replace('by <a href="/u/1">newcomer</a></div>', `by <a href="/u/1">newcomer</a></div>${comments(QUESTION_COMMENT, 'helper')}`).replace(
    'by <a href="/u/2">gitfan</a></div>',
    `by <a href="/u/2">gitfan</a></div>${comments(ANSWER_COMMENT, 'reviewer')}`,
  );
  const text = questionPageText(t, withComments);
  t.false(text.includes(QUESTION_COMMENT));
  t.false(text.includes(ANSWER_COMMENT));

  // No answers: the replies under the question, classed comments, are the thread.
  const reply = (text: string, author: string) => `<li class="comment"><p>${text}</p> – <a href="/u/${author}">${author}</a> <span class="relativetime">Jan 5, 2023</span></li>`;
  const repliesAsComments = page(
    '<title>How do I undo the last commit?</title><script type="application/ld+json">{"@context":"https://schema.org","@type":"QAPage"}</script>',
    `<div id="content"><h1>How do I undo the last commit?</h1>
     <div class="question"><p>I committed the wrong files to my local branch and have not pushed yet. How can I take the commit back and keep my changes in the working tree?</p>
       <div class="comments"><ul>${reply('Reset with the soft option, and the files stay staged in the working tree exactly as they were before the commit.', 'gitfan')}${reply('A mixed reset unstages them as well; both only rewrite history that nobody else has pulled yet, so do it before a push.', 'historian')}</ul></div></div>
     <div class="question-meta"><p>Asked in the version control forum on Jan 4, 2023 by newcomer; viewed 1,204 times, last active two days ago.</p></div></div>`,
  );
  const replies = extractHtml(repliesAsComments, 'https://qa.example/questions/7/undo-last-commit');
  t.is(replies.pageType, 'forum');
  t.regex(replies.text, /committed the wrong files/);
  t.regex(replies.text, /Reset with the soft option/);
  t.regex(replies.text, /A mixed reset unstages them/);
});

const ARTICLE_WITH_COMMENTS = page(
  `<title>The tide mill reopens</title><meta property="og:type" content="article">
   <script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'The tide mill reopens', author: { '@type': 'Person', name: 'Ada Byrne' } })}</script>`,
  `<article><h1>The tide mill reopens</h1>
   <p>${'After six years of restoration the tide mill on the estuary turns again, grinding flour with the power of the falling tide twice a day. '.repeat(3)}</p>
   <p>${'Volunteers rebuilt the wooden wheel from oak felled in the county, following drawings kept in the parish archive since the last repair. '.repeat(3)}</p></article>
   <section id="comments" class="comments-area"><h2>3 comments</h2>
     <div class="comment"><span class="comment-author">walker</span> <time datetime="2024-05-01">May 1, 2024</time><p>Visited last weekend and bought a bag of the flour, wonderful to see it working again.</p></div>
     <div class="comment"><span class="comment-author">miller_fan</span> <time datetime="2024-05-02">May 2, 2024</time><p>Does anyone know whether they run the wheel on weekdays too, or only for open days?</p></div>
     <div class="comment"><span class="comment-author">local</span> <time datetime="2024-05-03">May 3, 2024</time><p>Weekdays at high tide, the board at the gate lists the times for each month.</p></div></section>`,
);

test('comments under an article stay out, and the author comes from JSON-LD', (t) => {
  const extracted = extractHtml(ARTICLE_WITH_COMMENTS, 'https://estuary.example/news/tide-mill-reopens');
  t.is(extracted.pageType, 'article');
  t.is(extracted.author, 'Ada Byrne');
  t.regex(extracted.text, /tide mill on the estuary turns again/);
  t.regex(extracted.text, /Volunteers rebuilt the wooden wheel/);
  t.notRegex(extracted.text, /bought a bag of the flour|weekdays too|board at the gate/);
});

test('a long blog post is an article even when the discussion in its comments area outweighs it', (t) => {
  const paragraphs = Array.from(
    { length: 12 },
    (_, index) => `Part ${index + 1} of the walk follows the old towpath past the locks, where the canal company once kept its stables and a small forge for the barge horses.`,
  );
  const comment = (index: number) => `<li class="comment" id="comment-${index}"><div class="comment-meta"><b>reader${index}</b> <time datetime="2024-05-0${index + 1}T09:00:00Z">May ${index + 1}, 2024</time></div>
    <p>${'I walked this stretch last summer with my children and we stopped at every lock to watch the boats go through. '.repeat(3)}</p></li>`;
  const html = page(
    '<title>Walking the old towpath | Canal Notes</title>',
    `<main><article class="post"><h1>Walking the old towpath</h1>${paragraphs.map((paragraph) => `<p>${paragraph}</p>`).join('')}</article>
     <div id="comments" class="comments-area"><h2>12 comments</h2><ol class="comment-list">${Array.from({ length: 8 }, (_, index) => comment(index)).join('')}</ol></div></main>`,
  );
  const extracted = extractHtml(html, 'https://canal.example/2024/05/towpath');
  t.is(extracted.pageType, 'article');
  for (const paragraph of paragraphs) t.true(extracted.text.includes(paragraph));
  t.false(extracted.text.includes('watch the boats go through'));
});

const PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD =
  'A compact espresso grinder with fifty-four conical burrs, a stepless adjustment collar and a dosing cup that fits standard portafilters.';

const PRODUCT = page(
  `<title>Burr grinder BG-54 | Kitchen Shop</title><meta property="og:type" content="product">
   <script type="application/ld+json">${JSON.stringify({
     '@context': 'https://schema.org',
     '@type': 'Product',
     name: 'Burr grinder BG-54',
     description: PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD,
     brand: { '@type': 'Brand', name: 'Grindwell' },
     offers: { '@type': 'Offer', price: '189.00', priceCurrency: 'EUR' },
   })}</script>`,
  `<div class="breadcrumb"><a href="/">Home</a> › <a href="/coffee">Coffee</a></div>
   <div class="product-main"><h1>Burr grinder BG-54</h1>
     <div class="product-price"><span class="price">€189.00</span></div>
     <form class="add-to-cart"><button type="submit">Add to cart</button></form>
     <h2>Specifications</h2>
     <table class="specs"><tr><th>Burrs</th><td>54 mm conical, hardened steel</td></tr>
       <tr><th>Motor</th><td>150 W, 450 rpm</td></tr><tr><th>Hopper</th><td>250 g</td></tr></table>
     <dl class="details"><dt>Weight</dt><dd>3.1 kg</dd><dt>Warranty</dt><dd>2 years</dd></dl>
     <h3>You may also like</h3><div class="carousel">${['Hand grinder HG-1 €59.00', 'Scale with timer €39.90', 'Knock box €24.50']
       .map((item, index) => `<div class="tile"><a href="/p/${20 + index}">${item.replace(/ €.*/, '')}</a> <span>${item.replace(/^.* /, '')}</span></div>`)
       .join('')}</div></div>
   <div class="related-products"><h3>Customers also bought</h3><a href="/p/9">Milk jug</a> <a href="/p/10">Tamper</a></div>`,
);

test('a product page keeps name, price, specification table and list, and its JSON-LD description', (t) => {
  const extracted = extractHtml(PRODUCT, 'https://kitchen.example/p/bg-54');
  t.is(extracted.pageType, 'product');
  t.regex(extracted.text, /Burr grinder BG-54/);
  t.regex(extracted.text, /€189\.00/);
  t.regex(extracted.text, /Burrs\s+54 mm conical, hardened steel/);
  t.regex(extracted.text, /Motor\s+150 W, 450 rpm/);
  t.regex(extracted.text, /Weight\s+3\.1 kg/);
  t.true(extracted.text.includes(PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD));
  t.notRegex(extracted.text, /Customers also bought|Milk jug/);
  // Other products, with their own links and prices, are not this product's content.
  t.notRegex(extracted.text, /Hand grinder|Scale with timer|€59\.00/);
});

test("a product's JSON-LD facts read as HTML reads them: entities decoded, tags parting words", (t) => {
  const description = 'Grindwell&reg; burrs keep their edge for &gt;10,000 shots.<br>Each grinder is tested at the factory&#8217;s own bench.';
  const html = PRODUCT.replace(JSON.stringify(PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD), JSON.stringify(description));
  const extracted = extractHtml(html, 'https://kitchen.example/p/bg-54');
  t.is(extracted.pageType, 'product');
  t.true(extracted.text.includes('Grindwell® burrs keep their edge for >10,000 shots. Each grinder is tested at the factory’s own bench.'), extracted.text);
  t.notRegex(extracted.text, /&(reg|gt|#8217);|<br>/);
});

test("a product's JSON-LD description that its shop percent-encoded whole reads as words", (t) => {
  const html = PRODUCT.replace(JSON.stringify(PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD), JSON.stringify(encodeURIComponent(PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD)));
  t.true(html.includes('A%20compact%20espresso'));
  const extracted = extractHtml(html, 'https://kitchen.example/p/bg-54');
  t.true(extracted.text.includes(PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD), extracted.text);
  t.false(extracted.text.includes('%20'));
});

test("a product's JSON-LD name that its description opens with is not added a second time", (t) => {
  const name = 'Burr grinder BG-54 with dosing cup, matte black';
  const description = `${name}. ${PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD}`;
  const html = PRODUCT.replace('"name":"Burr grinder BG-54"', JSON.stringify({ name }).slice(1, -1)).replace(JSON.stringify(PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD), JSON.stringify(description));
  t.true(html.includes(name));
  const extracted = extractHtml(html, 'https://kitchen.example/p/bg-54');
  t.true(extracted.text.includes(description), extracted.text);
  t.is(extracted.text.split(name).length - 1, 1, extracted.text);
});

test("a product's JSON-LD facts that the page shows in its own layout are not added again: a specification row, a description after another opening", (t) => {
  const shownDescription = 'Each grinder leaves our workshop with burrs aligned by hand and a test grind of a full kilo of beans.';
  const product = JSON.stringify({
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: 'Burr grinder BG-54',
    description: `HAND ALIGNED. ${shownDescription}`,
    additionalProperty: [{ '@type': 'PropertyValue', name: 'Burrs', value: '54 mm conical, hardened steel' }],
  });
  const html = PRODUCT.replace(/<script type="application\/ld\+json">[^<]*<\/script>/, `<script type="application/ld+json">${product}</script>`).replace(
    '<h2>Specifications</h2>',
    `<p>${shownDescription}</p><h2>Specifications</h2>`,
  );
  t.true(html.includes('HAND ALIGNED.'));
  const extracted = extractHtml(html, 'https://kitchen.example/p/bg-54');
  t.is(extracted.pageType, 'product');
  t.regex(extracted.text, /Burrs\s+54 mm conical, hardened steel/);
  t.is(extracted.text.split('54 mm conical, hardened steel').length - 1, 1, extracted.text);
  t.is(extracted.text.split(shownDescription).length - 1, 1, extracted.text);
});

const RECOMMENDED = ['Hand grinder HG-1', 'Scale with timer', 'Knock box', 'Milk jug 350 ml', 'Tamper 58 mm', 'Dosing funnel', 'Cleaning brush', 'Descaler tablets', 'Bean cellar'];

const TILE_BLURB = 'A well made accessory that suits every grinder in our range, shipped from our own warehouse within a day.';

/** Rows of tiles, each linked and priced, under the headings given: a shop's recommendations or a category's grid. */
function tileRows(headings: string[], blurb: string): string {
  const tile = (name: string, index: number) => `<li><a href="/p/${40 + index}">${name}</a> <p>${blurb}</p> <span class="price">€${19 + index}.90</span></li>`;
  return headings.map((heading) => `<section><h2>${heading}</h2><ul class="carousel">${RECOMMENDED.map(tile).join('')}</ul></section>`).join('');
}

const PRODUCT_OWN_TEXT = [
  'The BG-54 grinds from Turkish fine to French press coarse without steps between. Its burrs are set by a collar with a click per micron, so a dose can be dialled in and found again.',
  'The motor runs slowly to keep the beans cool, and the chute is short, so less than a gram stays inside between doses. The hopper holds a quarter of a kilo and locks shut when it is lifted off.',
];

test("a product page whose recommendations outweigh the product's own text keeps the product's text, not the recommendations", (t) => {
  const html = page(
    `<title>Burr grinder BG-54 | Kitchen Shop</title><script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Product', name: 'Burr grinder BG-54', offers: { '@type': 'Offer', price: '189.00', priceCurrency: 'EUR' } })}</script>`,
    `<main><div class="item"><h1>Burr grinder BG-54</h1><div class="price">€189.00</div><button class="add-to-cart">Add to cart</button><h2>Description</h2><p>${PRODUCT_OWN_TEXT[0]}</p><p>${PRODUCT_OWN_TEXT[1]}</p></div>
     <div class="more">${tileRows(['Similar items', 'Customers also viewed'], TILE_BLURB)}</div></main>`,
  );
  const extracted = extractHtml(html, 'https://kitchen.example/p/bg-54');
  t.is(extracted.pageType, 'product');
  for (const paragraph of PRODUCT_OWN_TEXT) t.true(extracted.text.includes(paragraph), extracted.text);
  t.regex(extracted.text, /€189\.00/);
  for (const name of RECOMMENDED) t.false(extracted.text.includes(name), name);
});

test('a page of priced, linked tiles with a buy button and no product of its own in JSON-LD is a listing, and keeps its tiles', (t) => {
  // Tiles this long are no listing by their length alone; the price and the buy button read as a product's.
  const html = page('<title>Grinder accessories | Kitchen Shop</title>', `<main><h1>Grinder accessories</h1><button class="add-to-cart">Add to cart</button>${tileRows(['All accessories'], TILE_BLURB.repeat(4))}</main>`);
  const extracted = extractHtml(html, 'https://kitchen.example/c/accessories');
  t.is(extracted.pageType, 'listing');
  for (const name of RECOMMENDED) t.true(extracted.text.includes(name), name);
  t.regex(extracted.text, /€19\.90/);
});

const CATEGORY_ITEMS = [
  ['Trail shoe Ridge 3', '€129.95', 'Grippy outsole for wet rock and mud, 8 mm drop.'],
  ['Road shoe Glide 10', '€149.00', 'Soft foam midsole for long runs on pavement.'],
  ['Racing flat Dash', '€99.50', 'Light and firm, made for 5 km to half marathon.'],
  ['Hiking boot Summit', '€179.00', 'Waterproof leather upper with ankle support.'],
  ['Walking shoe Stroll', '€79.90', 'Wide toe box and a cushioned heel for all-day wear.'],
];

const CATEGORY = page(
  '<title>Running shoes | Sport Shop</title>',
  `<div class="filters" role="search"><h3>Filter</h3><label><input type="checkbox"> Vegan materials</label><select><option>Sort by price</option></select></div>
   <main><h1>Running shoes</h1><p class="count">5 results</p>
   <ul class="product-grid">${CATEGORY_ITEMS.map(
     ([name, price, blurb], index) =>
       `<li class="product-tile"><a href="/p/${index}"><img src="/i/${index}.jpg" alt=""><h3>${name}</h3></a><span class="price">${price}</span><p>${blurb}</p></li>`,
   ).join('')}</ul></main>`,
);

/** The category page (or a variant of it) extracted: a listing keeping every item's title, price and short text. */
function listingText(t: ExecutionContext, html: string): string {
  const extracted = extractHtml(html, 'https://sport.example/c/running-shoes');
  t.is(extracted.pageType, 'listing');
  for (const [name = '', price = '', blurb = ''] of CATEGORY_ITEMS) {
    t.true(extracted.text.includes(name), name);
    t.true(extracted.text.includes(price), price);
    t.true(extracted.text.includes(blurb), blurb);
  }
  return extracted.text;
}

test('a category grid is a listing and keeps every item with its title, price and short text, without the filter panel', (t) => {
  t.notRegex(listingText(t, CATEGORY), /Filter|Vegan materials|Sort by price/);
});

test("a listing keeps its heading and the category's description above the items, without the result count, sorting and pagination", (t) => {
  const intro = 'Shoes for road, trail and track, fitted in our shop and tested by our staff on the hills around town.';
  const html = CATEGORY.replace(
    '<p class="count">5 results</p>',
    `<p class="intro">${intro}</p><div class="toolbar"><span>5 results</span> <button type="button">Sort by</button> <span>Showing 1-5 of 5</span></div>`,
  ).replace('</ul></main>', '</ul><div class="pages"><a href="?page=1">Prev</a> <span>Page 1 of 1</span> <a href="?page=2">Next</a></div></main>');
  const text = listingText(t, html);
  t.regex(text, /^Running shoes$/m);
  t.true(text.includes(intro), text);
  t.notRegex(text, /5 results|Sort by|Showing 1-5|Page 1 of 1|\bPrev\b|\bNext\b/);
});

test("a listing's items in an ordered list read without their numbers, as when the list alone is the region", (t) => {
  const html = CATEGORY.replace('<ul class="product-grid">', '<ol class="product-grid">').replace('</ul></main>', '</ol></main>');
  const text = listingText(t, html);
  t.regex(text, /^Running shoes$/m);
  t.notRegex(text, /^\s*\d+\.\s/m, text);
});

const DOCUMENTATION = page(
  '<title>Configuring retries — Client library docs</title>',
  `<div class="sidebar"><a href="/docs/install">Install</a> <a href="/docs/retries">Retries</a></div>
   <main><article><h1>Configuring retries</h1>
   <p>The client retries requests that fail with a network error or a 503 answer. Each retry waits longer than the one before, up to the limit you set.</p>
   <pre><code>const client = new Client({ retries: 3, backoffMs: 200 });</code></pre>
   <p>The options and their defaults are listed below; every one of them can also be set per request.</p>
   <table><thead><tr><th>Option</th><th>Default</th><th>Meaning</th></tr></thead>
   <tbody><tr><td>retries</td><td>2</td><td>How many times a failed request is tried again</td></tr>
   <tr><td>backoffMs</td><td>100</td><td>The first wait, doubled on each retry</td></tr></tbody></table>
   <h2>Per-request options</h2><p>To turn retries off for one call, pass the option on the request itself:</p>
   <pre><code>await client.get('/items', { retries: 0 });</code></pre></article></main>`,
);

test('a documentation page keeps its code blocks and its table, and renders them as markdown', (t) => {
  const extracted = extractHtml(DOCUMENTATION, 'https://client.example/docs/retries', { markdown: true });
  t.is(extracted.pageType, 'documentation');
  t.regex(extracted.text, /new Client\(\{ retries: 3, backoffMs: 200 \}\)/);
  t.regex(extracted.text, /backoffMs\s+100\s+The first wait, doubled on each retry/);
  t.regex(extracted.text, /retries: 0/);
  const markdown = extracted.markdown ?? '';
  t.regex(markdown, /^## Per-request options$/m);
  t.regex(markdown, /```\nconst client = new Client\(\{ retries: 3, backoffMs: 200 \}\);\n```/);
  t.regex(markdown, /\| Option \| Default \| Meaning \|\n\| --- \| --- \| --- \|\n\| retries \| 2 \|/);
  t.notRegex(markdown, /Install/);
});

test('a documentation page saved with a stylesheet before <head> is still read from its body as documentation', (t) => {
  // Scripts insert stylesheets before <head> in a live page; saved as HTML, the outline is broken.
  const saved = DOCUMENTATION.replace('<head>', '<link rel="stylesheet" href="/theme-late.css"><head>');
  t.not(saved, DOCUMENTATION);
  const extracted = extractHtml(saved, 'https://client.example/docs/retries');
  t.is(extracted.pageType, 'documentation');
  t.regex(extracted.text, /new Client\(\{ retries: 3, backoffMs: 200 \}\)/);
  t.notRegex(extracted.text, /Install/);
});

test("a heading's permalink mark (Sphinx's ¶, rustdoc's §, a #) is no text of the heading; a reference that starts with § stays", (t) => {
  const withPermalinks = DOCUMENTATION.replace('<h1>Configuring retries</h1>', '<h1>Configuring retries<a class="headerlink" href="#configuring-retries" title="Link to this heading">¶</a></h1>')
    .replace('<h2>Per-request options</h2>', '<h2 id="per-request"><a href="#per-request" class="anchor">§</a>Per-request options <a href="#per-request">#</a></h2>')
    .replace('listed below;', 'listed below (see <a href="/terms#s2">§ 2</a> of the licence);');
  const extracted = extractHtml(withPermalinks, 'https://client.example/docs/retries', { markdown: true });
  t.is(extracted.pageType, 'documentation');
  t.regex(extracted.text, /^Per-request options$/m);
  t.notRegex(extracted.text, /[¶#]|§P/);
  t.regex(extracted.text, /see § 2 of the licence/);
  const markdown = extracted.markdown ?? '';
  t.regex(markdown, /^## Per-request options$/m);
  t.notRegex(markdown, /¶|\(#per-request\)|\(#configuring-retries\)/);
});

test('markdown of a table with a caption or column widths is a GFM table, its caption the line above, never HTML', (t) => {
  const markdown = htmlToMarkdown(
    '<table><caption>Fares from the old harbour</caption><colgroup><col width="120"><col width="80"></colgroup>' +
      '<thead><tr><th>Fare</th><th>Price</th></tr></thead><tbody><tr><td>Single</td><td>2.10</td></tr><tr><td>Return</td><td>3.80</td></tr></tbody></table>',
  );
  t.regex(markdown, /^Fares from the old harbour\n\n\| Fare \| Price \|\n\| --- \| --- \|\n\| Single \| 2\.10 \|\n\| Return \| 3\.80 \|$/);
  t.notRegex(markdown, /<(table|caption|col)/);
});

test('markdown of layout tables: a table straight inside a table, or one without rows, keeps its text and never throws', (t) => {
  // An HTML parser closes a table at a <table> start tag directly inside it, and moves a <div> out of
  // a table: turndown's parser then saw tables without rows, and its GFM plugin threw.
  const nested = htmlToMarkdown(
    '<table width="770"><table><tr><th>Fare</th><th>Price</th></tr><tr><td>Single</td><td>2.10</td></tr></table>' +
      '<tr><td>Timetables change on the first Monday of each month.</td></tr></table>',
  );
  t.regex(nested, /\| Fare \| Price \|\n\| --- \| --- \|\n\| Single \| 2\.10 \|/);
  t.regex(nested, /Timetables change on the first Monday of each month\./);
  const rowless = htmlToMarkdown('<table><div><p>Layout text sits here.</p><table><tr><td>Inner</td><td>cell</td></tr></table></div></table><p>After.</p>');
  t.regex(rowless, /Layout text sits here\./);
  t.regex(rowless, /\| Inner \| cell \|/);
  t.regex(rowless, /After\.$/);
});

test('markdown leaves the underscores of identifiers in prose unescaped, and escapes what could still be markup', (t) => {
  const markdown = htmlToMarkdown('<p>Set max_characters, or snake_case_2 names; a _private field, 2*3*4 and [brackets].</p><p>- a dash, not a list</p>');
  t.regex(markdown, /Set max_characters, or snake_case_2 names;/);
  t.regex(markdown, /a \\_private field, 2\\\*3\\\*4 and \\\[brackets\\\]\./);
  t.regex(markdown, /^\\- a dash, not a list$/m);
});

test('markdown escapes a block marker only where it starts a line, not after a link or emphasis', (t) => {
  // turndown escapes a marker at the start of each text node, and a text node often starts mid-line.
  const markdown = htmlToMarkdown(
    '<p>Version 2 <a href="/a">- release notes</a>, see<span># 12</span>, quoted<span>> here</span>, chapter <span>3. Onward</span> and<span>+ more</span></p>' +
      '<p>- starts a line</p><p># not a heading</p><p>> not a quote</p><p>2024. A year, not a list</p>' +
      '<ul><li>- a dash inside an item</li><li><a href="/b">Link</a><span>- then a dash</span></li></ul><blockquote><p>+ plus at a quote start</p></blockquote>',
  );
  t.regex(markdown, /^Version 2 \[- release notes\]\(\/a\), see# 12, quoted> here, chapter 3\. Onward and\+ more$/m);
  t.regex(markdown, /^\\- starts a line$/m);
  t.regex(markdown, /^\\# not a heading$/m);
  t.regex(markdown, /^\\> not a quote$/m);
  t.regex(markdown, /^2024\\\. A year, not a list$/m);
  t.regex(markdown, /^- {1,3}\\- a dash inside an item$/m);
  t.regex(markdown, /^- {1,3}\[Link\]\(\/b\)- then a dash$/m);
  t.regex(markdown, /^> \\\+ plus at a quote start$/m);
  t.false(markdown.includes('\u0000'));
  // A NUL in the page itself never turns into a backslash.
  t.is(htmlToMarkdown('<p>a<span>\u0000- b</span></p>'), 'a- b');
});

test('markdown fences every preformatted block, names its language, and keeps each table row on one line', (t) => {
  // Pygments and Sphinx write <pre> with spans and no <code>; turndown fenced only <pre><code>.
  const sphinx = htmlToMarkdown('<div class="highlight-python notranslate"><div class="highlight"><pre><span class="k">def</span> <span class="nf">retry</span>():\n    <span class="k">return</span> 3\n</pre></div></div>');
  t.is(sphinx, '```python\ndef retry():\n    return 3\n```');
  t.is(htmlToMarkdown('<pre>first line<br>second line</pre>'), '```\nfirst line\nsecond line\n```');
  t.is(htmlToMarkdown('<pre><code class="language-none">plain</code></pre>'), '```\nplain\n```');
  // A page's own data-language names the fence's language only when it is a name.
  t.is(htmlToMarkdown('<pre data-language="ruby">puts 1</pre>'), '```ruby\nputs 1\n```');
  t.is(htmlToMarkdown('<pre data-language="x\n```\n# Injected">puts 1</pre>'), '```\nputs 1\n```');
  // A fence inside the code gets a longer fence around it.
  t.is(htmlToMarkdown('<pre><code>```\ninner\n```</code></pre>'), '````\n```\ninner\n```\n````');
  // More fence lines than a function call takes arguments: still one block, no exception.
  t.true(htmlToMarkdown(`<pre>${'```\n'.repeat(200_000)}</pre>`).startsWith('````\n```\n'));
  t.is(htmlToMarkdown('<p>Before.</p><pre>   </pre><p>After.</p>'), 'Before.\n\nAfter.');
  const table = htmlToMarkdown(
    '<table>\n<tr>\n<th>Operator</th>\n<th>Meaning</th>\n</tr>\n<tr>\n<td><code>a | b</code></td>\n<td><p>either one</p><p>or both</p></td>\n</tr>\n</table>',
  );
  t.is(table, '| Operator | Meaning |\n| --- | --- |\n| `a \\| b` | either one or both |');
});

test('markdown links are absolute, lead somewhere a reader can go, and images and empty links leave nothing', (t) => {
  const html =
    '<h2>Setup<br>and use</h2><p>Read <a href="/docs/install">the guide</a>, <a href="faq.html">the FAQ</a> or <a href="#limits">the limits</a>; ' +
    'write to <a href="mailto:help@tool.example">us</a>. <a href="javascript:void(0)">Show more</a> <a href="">here</a>.</p>' +
    '<figure><img src="/shot.png" alt="Screenshot"><figcaption>The settings screen</figcaption></figure><p><a href="/next"><h3>Next step</h3></a></p>';
  const markdown = htmlToMarkdown(html, 'https://tool.example/docs/start.html');
  t.regex(markdown, /^## Setup and use$/m);
  t.regex(markdown, /Read \[the guide\]\(https:\/\/tool\.example\/docs\/install\), \[the FAQ\]\(https:\/\/tool\.example\/docs\/faq\.html\) or \[the limits\]\(https:\/\/tool\.example\/docs\/start\.html#limits\);/);
  t.regex(markdown, /write to \[us\]\(mailto:help@tool\.example\)\. Show more here\./);
  t.regex(markdown, /^The settings screen$/m);
  t.notRegex(markdown, /shot\.png|Screenshot|\[\]/);
  t.regex(markdown, /^### \[Next step\]\(https:\/\/tool\.example\/next\)$/m);
  // A page read from a file has no web address: its relative links stay as written.
  t.regex(htmlToMarkdown(html, 'file:///home/me/start.html'), /\[the guide\]\(\/docs\/install\)/);
  // The address of the page being extracted is the base.
  const extracted = extractHtml(page('<title>Start</title>', `<main><article><h1>Start</h1><p>${'Install the tool, then read on. '.repeat(12)}<a href="/docs/install">Install</a></p></article></main>`), 'https://tool.example/docs/start', { markdown: true });
  t.regex(extracted.markdown ?? '', /\[Install\]\(https:\/\/tool\.example\/docs\/install\)/);
});

test("a code sample's comments stay: a highlighter's 'comment' class names a token of the code, not a comments section", (t) => {
  const article = page(
    '<title>Getting started with git — Dev notes</title>',
    `<main><article><h1>Getting started with git</h1>
     <p>${'Version control is a critical part of any developer toolkit, whatever the size of the project or the team. '.repeat(4)}</p>
     <p>To get started, I would suggest digging in with the following commands, each with a note on what it does:</p>
     <pre><code class="language-bash"><span class="hljs-comment"># initialize a repository</span>\ngit init\n<span class="token comment"># see what changed</span>\ngit status</code></pre>
     <p>${'Each of these commands has many options, and the manual pages explain them well enough for daily use. '.repeat(3)}</p></article>
     <div class="comments"><p>${'Great post, thanks for writing it up so clearly for the rest of us! '.repeat(3)}</p></div></main>`,
  );
  const extracted = extractHtml(article, 'https://dev.example/notes/git', { markdown: true });
  t.regex(extracted.text, /# initialize a repository\ngit init\n# see what changed\ngit status/);
  t.regex(extracted.markdown ?? '', /```bash\n# initialize a repository\ngit init\n# see what changed\ngit status\n```/);
  t.notRegex(extracted.text, /Great post/);
});

test('comments under a "Comments" heading stay out even without comment markup; a section headed "Comment" stays in', (t) => {
  const article = page(
    '<title>Pitch nothing — Startup notes</title>',
    `<div id="main"><div class="entry"><h1>Pitch nothing</h1>
     <p>${'Journalists receive hundreds of pitches a day and read the first two lines of each before deciding. '.repeat(4)}</p>
     <p>So here is what to offer a journalist instead of a product pitch, in four kinds:</p>
     <h3>Comment</h3><p>${'Offer your opinion and analysis on the news of your field, with a short biography attached. '.repeat(2)}</p>
     <h3>Access</h3><p>${'Open doors to the people a journalist cannot reach alone, such as investors and founders. '.repeat(2)}</p></div>
     <div class="post"><h3>COMMENTS</h3><div class="Normal"><p>${'Interesting, I once gave an interview and nothing came of it afterwards. '.repeat(3)}</p>
     <p>posted on Tuesday at 9:46 AM by a reader</p></div></div></div>`,
  );
  const extracted = extractHtml(article, 'https://startup.example/blog/pitch-nothing');
  t.is(extracted.pageType, 'article');
  t.regex(extracted.text, /Comment\n+Offer your opinion/);
  t.regex(extracted.text, /Open doors to the people/);
  t.notRegex(extracted.text, /COMMENTS|Interesting, I once gave|posted on Tuesday/);
});

test("a highlighter's line elements with no newline between them stay separate lines, as text and as markdown", (t) => {
  // Shiki's span.line and Expressive Code's div.ec-line, with the newlines left to CSS: as text the
  // lines would run together ("…my-appcd my-app").
  const highlighted = page(
    '<title>Getting started — Bundler docs</title>',
    `<main><article><h1>Getting started</h1>
     <p>Create a project with the starter, then move into its folder and install the dependencies it lists.</p>
     <pre class="shiki"><code><span class="line"><span style="color:red">npm</span><span> create bundler my-app</span></span><span class="line"><span>cd my-app</span></span><span class="line highlighted"><span>npm install</span></span></code></pre>
     <p>The configuration file sits at the root of the project; its defaults suit most applications.</p>
     <pre><code><div class="ec-line"><div class="code">export default {</div></div><div class="ec-line"><div class="code">  entry: 'src/main.ts',</div></div><div class="ec-line"><div class="code">}</div></div></code></pre>
     <p>Run the development server and open the address it prints to see the application reload on every change.</p>
     <pre><code>one line\nand another</code></pre></article></main>`,
  );
  const extracted = extractHtml(highlighted, 'https://bundler.example/docs/start', { markdown: true });
  t.regex(extracted.text, /npm create bundler my-app\ncd my-app\nnpm install/);
  t.regex(extracted.text, /export default \{\n {2}entry: 'src\/main\.ts',\n\}/);
  t.regex(extracted.text, /one line\nand another/);
  t.notRegex(extracted.text, /\n\n\n/);
  t.regex(extracted.markdown ?? '', /```\nnpm create bundler my-app\ncd my-app\nnpm install\n```/);
});

test('markdown is only rendered when asked for, and a table without a header row stays a table', (t) => {
  t.is(extractHtml(DOCUMENTATION, 'https://client.example/docs/retries').markdown, undefined);
  const markdown = extractHtml(PRODUCT, 'https://kitchen.example/p/bg-54', { markdown: true }).markdown ?? '';
  t.regex(markdown, /\| Burrs \| 54 mm conical, hardened steel \|\n\| --- \| --- \|\n\| Motor \| 150 W, 450 rpm \|/);
  t.true(markdown.includes(PRODUCT_DESCRIPTION_ONLY_IN_JSON_LD));
});

const CHINESE_PARAGRAPHS = [
  '今年春天，河边的老磨坊经过六年的修缮重新开放，每天随着潮水的涨落转动两次，用潮汐的力量磨出面粉。',
  '志愿者们按照教区档案里保存的图纸，用本县砍伐的橡木重新制作了木轮，并在开放日向游客讲解磨坊的历史。',
  '磨坊管理处表示，平日里只在涨潮时开动水轮，每月的运转时间都会公布在大门旁边的告示牌上，欢迎大家前来参观。',
  '修缮工程由县文物部门和当地居民共同出资，工匠们花了两年时间更换了腐朽的闸门，又用传统的方法重新砌好了石墙。',
  '开放当天，数百名居民来到河边，看着水轮在退潮时慢慢转起来，不少老人说这是他们小时候最熟悉的声音。',
];

const CHINESE_ARTICLE = `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>潮汐磨坊重新开放</title></head><body>
  <div class="nav"><a href="/">首页</a> <a href="/news">新闻</a></div>
  <div class="content"><h1>潮汐磨坊重新开放</h1>${CHINESE_PARAGRAPHS.map((paragraph) => `<p>${paragraph}</p>`).join('')}</div>
  <div class="footer">版权所有</div></body></html>`;

test('a Chinese article without declared type is read as an article: prose is measured in characters, not words', (t) => {
  const extracted = extractHtml(CHINESE_ARTICLE, 'https://news.example.cn/2024/mill.html');
  t.is(extracted.pageType, 'article');
  for (const paragraph of CHINESE_PARAGRAPHS) t.true(extracted.text.includes(paragraph));
});

test('short Chinese paragraphs that mention a time stay: Chinese prose is counted by characters, not by space-separated words', (t) => {
  const timed = ['3月5日10:30，县政府宣布磨坊正式开放。', '首场参观于14:00开始，持续两个小时。'];
  const html = CHINESE_ARTICLE.replace('<h1>潮汐磨坊重新开放</h1>', `<h1>潮汐磨坊重新开放</h1><p>${timed[0]}</p>`).replace(
    `<p>${CHINESE_PARAGRAPHS[2]}</p>`,
    `<p>${CHINESE_PARAGRAPHS[2]}</p><p>${timed[1]}</p>`,
  );
  const extracted = extractHtml(html, 'https://news.example.cn/2024/mill.html');
  for (const paragraph of [...timed, ...CHINESE_PARAGRAPHS]) t.true(extracted.text.includes(paragraph), paragraph);
});

// Shops and charts lay a card's brand, name, year and rating out as spans side by side, apart by CSS.
const CARD_ITEMS = [
  ['Lumenworks', 'Ridge 400 Headlamp', '2026', '1h 54m', 'PG'],
  ['Northlight', 'Trail 300 Headlamp', '2025', '2h 10m', 'R'],
  ['Lumenworks', 'Summit 600 Headlamp', '2024', '1h 32m', 'PG'],
  ['Fieldgear', 'Camp 150 Lantern', '2023', '58m', 'G'],
  ['Northlight', 'Orbit 250 Headlamp', '2026', '2h 01m', 'R'],
] as const;

const CARD_GRID = page(
  '<title>Headlamps | Outdoor Shop</title>',
  `<main><h1>Headlamps</h1><ul class="product-grid">${CARD_ITEMS.map(
    ([brand, name, year, length, rating], index) =>
      `<li class="product-tile"><a href="/p/${index}"><span class="brand">${brand}</span><span class="name">${name}</span></a>` +
      `<div class="facts"><span>${year}</span><span>${length}</span><span>${rating}</span></div>` +
      `<p>Bright, light and <b>water</b><i>proof</i>: made for long nights outdoors.</p></li>`,
  ).join('')}</ul></main>`,
);

test('spans laid out side by side keep their words apart; a word split by markup, and code, stay as written', (t) => {
  const extracted = extractHtml(CARD_GRID, 'https://shop.example/c/headlamps');
  for (const [brand, name, year, length, rating] of CARD_ITEMS) {
    t.true(extracted.text.includes(`${brand} ${name}`), `${brand} ${name}`);
    t.true(extracted.text.includes(`${year} ${length} ${rating}`), `${year} ${length} ${rating}`);
  }
  t.true(extracted.text.includes('waterproof'));
  t.false(extracted.text.includes('water proof'));
  const document = parseDocument('<html><body><pre><code><span>let</span><span>Lamp</span></code></pre><p><span>東京</span><span>大学</span> <span>Acme</span><span>42</span></p></body></html>');
  spaceAdjacentInlineWords(document);
  t.is(document.querySelector('code')?.textContent, 'letLamp');
  t.is(document.querySelector('p')?.textContent, '東京大学 Acme 42');
});

test('calls to action (Quick view, Add to cart, Learn more, Compare, Choose options) stay out of a listing; items that merely mention them stay', (t) => {
  const withActions = CATEGORY.replace(
    /<p>/g,
    '<button class="qv">Quick view</button><a href="/cart/add" class="cta">Add to cart</a><span>Learn more ›</span>' +
      '<label><input type="checkbox"> Compare</label><fieldset><legend>More options</legend></fieldset><a href="/p/options">Choose Options</a><p>',
  );
  t.notRegex(listingText(t, withActions), /Quick view|Add to cart|Learn more|Compare|More options|Choose Options/);
  const sentence = extractHtml(CATEGORY.replace('Grippy outsole', 'Learn more about grip: a grippy outsole'), 'https://sport.example/c/running-shoes');
  t.true(sentence.text.includes('Learn more about grip: a grippy outsole'));
});

// Five sections of about 480 characters, each under a linked heading: a blog's tips, not a shop's grid.
const TIP_SENTENCES = [
  'Water the plants early in the morning, before the sun is high, so that the leaves dry during the day and mould has no time to settle.',
  'Use a can with a fine rose for seedlings, because a strong jet washes the compost away from the roots and leaves them bare in the tray.',
  'Check the soil with a finger before watering again: if it is still damp two centimetres down, the plant has all the water it can use.',
];
const TIPS = ['Morning watering', 'Gentle cans', 'The finger test', 'Mulch in May', 'Rain barrels'];
const TIPS_POST = page(
  '<title>Five watering tips | Garden Notes</title>',
  `<main><h1>Five watering tips</h1>${TIPS.map(
    (tip, index) => `<div class="tip"><h2><a href="/tips/${index}">${tip}</a></h2><p>${TIP_SENTENCES.join(' ')} ${tip} makes the difference.</p></div>`,
  ).join('')}</main>`,
);

test('an article made of short sections under linked headings is an article, not a listing', (t) => {
  const extracted = extractHtml(TIPS_POST, 'https://garden.example/2024/05/watering-tips');
  t.is(extracted.pageType, 'article');
  for (const sentence of TIP_SENTENCES) t.true(extracted.text.includes(sentence));
});

test("a price in a 'price-tag' element stays: the word tag there names no list of tags", (t) => {
  const tagged = CATEGORY.replace(/<span class="price">/g, '<span class="price-tag price-tag--sm">').replace('</ul></main>', '</ul><div class="tag">Tags: running, trail, road</div></main>');
  t.false(listingText(t, tagged).includes('Tags: running'));
});

test("a shop's product cards classed by their taxonomy (WooCommerce's product_tag-…) stay in the listing", (t) => {
  // WordPress classes each product by its custom taxonomies; "tag" there names a term, not a tag list.
  // Only the products given a tag carry the class, so it is no word of the page's layout either.
  let card = 0;
  const classed = CATEGORY.replace(/<li class="product-tile">/g, () => {
    const tagged = card++ % 3 === 0 ? ' product_tag-running' : '';
    return `<li class="product type-product product_cat-shoes${tagged} instock">`;
  });
  t.false(listingText(t, classed).includes('Filter'));
});

test('list items without text (colour swatches as pictures) leave no empty bullet in the text or the markdown', (t) => {
  // A style sheet's text is never shown: an item holding one is as empty.
  const swatches =
    '<ul class="colours"><li><img src="/s/red.png" alt="Red"></li><li><a href="?colour=blue"><img src="/s/blue.png" alt="Blue"></a></li>' +
    '<li><style>#swatch-green { background: #0a0; border-radius: 50%; }</style><span id="swatch-green"></span></li></ul>';
  const withSwatches = CATEGORY.replace(/<\/a><span class="price">/g, `</a>${swatches}<span class="price">`);
  t.is(withSwatches.split(swatches).length - 1, CATEGORY_ITEMS.length);
  const text = listingText(t, withSwatches);
  const { markdown = '' } = extractHtml(withSwatches, 'https://sport.example/c/running-shoes', { markdown: true });
  for (const [name = ''] of CATEGORY_ITEMS) t.true(markdown.includes(name), name);
  const emptyBullet = /^\s*[-*+]\s*$/m;
  t.notRegex(text, emptyBullet);
  t.notRegex(markdown, emptyBullet);
});

test("a list item that opens with an icon's block keeps its text on its bullet's line", (t) => {
  const features = ['Waterproof upper', 'Rock plate', 'Recycled laces'];
  const cards = CATEGORY_ITEMS.map(
    ([name, price], index) =>
      `<li class="product-tile"><a href="/p/${index}"><h3>${name}</h3></a><span class="price">${price}</span><ul class="features">${features
        .map((feature) => `<li><div class="icon"><img src="/i/check.svg" alt=""></div>${feature}</li>`)
        .join('')}</ul></li>`,
  );
  const grid = page('<title>Running shoes | Sport Shop</title>', `<main><h1>Running shoes</h1><ul class="product-grid">${cards.join('')}</ul></main>`);
  const { text } = extractHtml(grid, 'https://sport.example/c/running-shoes');
  t.notRegex(text, /^\s*[-*+]\s*$/m);
  for (const feature of features) t.regex(text, new RegExp(`^\\s*\\* ${feature}$`, 'm'), feature);
});

test('markdown never puts a link around blocks inside a code fence or on a list marker', (t) => {
  const markdown = htmlToMarkdown('<a href="/setup"><pre>npm install tide</pre><ul><li>Node 20</li></ul><h3>Install</h3></a>', 'https://tide.example/');
  t.true(markdown.includes('```\nnpm install tide\n```'), markdown);
  t.true(markdown.includes('-   Node 20'), markdown);
  t.true(markdown.includes('### [Install](https://tide.example/setup)'), markdown);
});

test("markdown puts a card's link around its picture and heading on the heading's line", (t) => {
  const grid = page(
    '<title>Running shoes | Sport Shop</title>',
    `<main><h1>Running shoes</h1><ul class="product-grid">${CATEGORY_ITEMS.map(
      ([name, price, blurb], index) =>
        `<li class="product-tile"><a href="/p/${index}"><img src="/i/${index}.jpg" alt=""><h3>${name}</h3></a><span class="price">${price}</span><p>${blurb}</p></li>`,
    ).join('')}</ul></main>`,
  );
  const { markdown = '' } = extractHtml(grid, 'https://sport.example/c/running-shoes', { markdown: true });
  for (const [name = ''] of CATEGORY_ITEMS) t.true(markdown.includes(`### [${name}](https://sport.example/p/`), name);
  t.notRegex(markdown, /^\s*(?:[-*+]\s+)?\[\s*$/m, 'no "[" left alone on a line');
});

const LEAD_STORY = [
  'The harbour authority approved the new ferry terminal on Monday after a debate that ran late into the night, ending two years of hearings.',
  'Work on the quay begins in autumn, and the first crossings from the new berth are planned for the summer after next, weather permitting.',
  'Fishing crews, who feared losing their moorings, were promised a sheltered basin of their own at the eastern end of the works.',
  'The council will publish the timetable for the building work next week, with a map of the roads that close while it lasts.',
  'Traders on the seafront welcomed the decision, saying the old landing stage had turned visitors away on every stormy weekend.',
  'A public meeting on the design of the waiting hall will be held at the library, where the drawings are on show until Friday.',
];
const TEASERS = [
  ['Rowing club wins the regatta', 'The under-18 crew took the cup by half a length.'],
  ['Lighthouse opens to visitors', 'Guided climbs start in June, booked at the museum.'],
  ['New bakery on Quay Street', 'Sourdough and rye from six in the morning, closed on Mondays.'],
] as const;

/** A news site's front page: a lead story told at length, then teasers of other stories. */
const FRONT_PAGE = page(
  '<title>Harbour Times: news from the bay</title>',
  `<main><section class="lead"><h2><a href="/2024/05/ferry-terminal">Ferry terminal approved</a></h2>${LEAD_STORY.map((text) => `<p>${text}</p>`).join('')}</section>
   <section class="more"><h2>More news</h2>${TEASERS.map(([headline, summary], index) => `<div class="story-${index}"><h3><a href="/2024/05/story-${index}">${headline}</a></h3><span>${summary}</span></div>`).join('')}</section></main>`,
);

test("a site's front page is read as a listing of its stories, not as the lead story's article", (t) => {
  // The same markup at a story's address is an article: its prose alone says so.
  t.is(extractHtml(FRONT_PAGE, 'https://harbour-times.example/2024/05/ferry-terminal').pageType, 'article');
  const front = extractHtml(FRONT_PAGE, 'https://harbour-times.example/?ref=home');
  t.is(front.pageType, 'listing');
  for (const text of LEAD_STORY) t.true(front.text.includes(text), text);
  for (const [headline, summary] of TEASERS) {
    t.true(front.text.includes(headline), headline);
    t.true(front.text.includes(summary), summary);
  }
});

test("a post at the site's root by its query (WordPress's /?p=123) is no front page", (t) => {
  t.is(extractHtml(FRONT_PAGE, 'https://harbour-times.example/?p=123').pageType, 'article');
  t.is(extractHtml(FRONT_PAGE, 'https://harbour-times.example/?page=2&utm_source=mail').pageType, 'listing');
});

test('a front page that declares itself an article keeps that type', (t) => {
  const declared = FRONT_PAGE.replace('<title>', '<meta property="og:type" content="article"><title>');
  t.is(extractHtml(declared, 'https://harbour-times.example/').pageType, 'article');
});

const TOPICS = [
  ['Schedule a workflow', 'Run a workflow at set times with a cron expression.'],
  ['Trigger on a push', 'Start a workflow whenever commits reach a branch.'],
  ['Choose a runner', 'Pick the machine and the operating system a job runs on.'],
  ['Store secrets', 'Keep tokens and passwords out of your workflow files.'],
] as const;

/** A documentation overview without a line of code: prose, then cards that link to its topics. */
const DOCUMENTATION_OVERVIEW = page(
  '<title>Writing workflows | Example Docs</title><meta property="og:type" content="article">',
  `<main><article><h1>Writing workflows</h1>
   <p>A workflow is a configurable process made of one or more jobs. You define it in a file kept beside your code, and the
   service runs it when an event you name happens in your repository, at a time you set, or when someone starts it by hand.</p>
   <p>Each job runs on a fresh machine and is made of steps that run one after another. Steps can run a command that you write
   or an action that someone has shared, and jobs can wait for one another or run side by side to finish sooner.</p>
   <p>The pages below explain how to decide when a workflow runs, where its jobs run, and how it keeps the credentials it
   needs without writing them into the file that anyone with access to the repository can read.</p>
   <div class="card-grid">${TOPICS.map(([title, summary]) => `<div class="card"><h3><a href="/topics/${title.toLowerCase().replace(/ /g, '-')}">${title}</a></h3><p>${summary}</p></div>`).join('')}</div>
   </article></main>`,
);

test('a page on a documentation site keeps its topic cards even without code (Readability keeps the prose alone); the same page elsewhere is an article', (t) => {
  for (const url of ['https://docs.example.com/en/workflows', 'https://example.com/docs/workflows', 'https://developer.example.com/workflows']) {
    const extracted = extractHtml(DOCUMENTATION_OVERVIEW, url);
    t.is(extracted.pageType, 'documentation', url);
    t.regex(extracted.text, /A workflow is a configurable process/, url);
    for (const [title, summary] of TOPICS) {
      t.true(extracted.text.includes(title), `${url}: ${title}`);
      t.true(extracted.text.includes(summary), `${url}: ${summary}`);
    }
    t.notRegex(extracted.text, /About us|Privacy/, url);
  }
  // News and shop sites file articles under /guides/; a local file says nothing about its site.
  for (const url of ['https://news.example.com/guides/writing-workflows', 'file:///tmp/docs/workflows.html']) {
    t.is(extractHtml(DOCUMENTATION_OVERVIEW, url).pageType, 'article', url);
  }
});

test("a story laid out as sibling boxes (its header, body, share bar, next and previous links) is an article, not a listing of four items", (t) => {
  const story = [
    'The finance institute said on Saturday that policy should stay steady this year, but that the reform of the banks must go faster if growth is to hold.',
    'Speaking at the university, its director said that lending to small firms had fallen for three quarters in a row, and that the banks had to be made to compete for them.',
    'He added that the central bank had room to cut rates later in the year, should the export figures for the spring fall short of the forecasts again.',
    'Several of the bankers in the audience said afterwards that the reform plan was sound, but that the timetable the institute asked for was too short to meet.',
  ];
  const html = page(
    '<title>Institute: keep policy steady, speed up bank reform - Daily Business</title>',
    `<div id="main">
      <div><a href="/">Daily Business</a> &gt; <a href="/economy/">Economy</a> 2005-04-25 08:24 <a href="/comments/1">Comments (0)</a></div>
      <div><h1>Institute: keep policy steady, speed up bank reform</h1>${story.map((sentence) => `<p>${sentence}</p>`).join('')}<p>Reported by <a href="/staff/luo">Luo Ke</a>.</p></div>
      <div><a href="/share/weibo">Share on Weibo</a> <a href="/share/mail">Email this story</a> <a href="/print/1">Print</a></div>
      <div><a href="/economy/2">Previous: Exporters ask for a weaker currency</a> <a href="/economy/3">Next: Steel output rises again</a></div>
    </div>`,
  );
  const extracted = extractHtml(html, 'https://biz.example/economy/2005-04-25/1.html');
  t.is(extracted.pageType, 'article');
  for (const sentence of story) t.true(extracted.text.includes(sentence), sentence);
  t.false(extracted.text.includes('Share on Weibo'));
});

test("a short news brief (too little prose for an article) keeps its story, not the site's menus and link lists around it", (t) => {
  const brief = [
    'The harbour ferry will run every twenty minutes from Monday while the bridge is closed for repairs.',
    'The council said the extra boats would cost less than the buses it hired during the last closure.',
  ];
  const menu = (heading: string, links: string[]) => `<div><h3>${heading}</h3><ul>${links.map((link, index) => `<li><a href="/${heading.length}/${index}">${link}</a></li>`).join('')}</ul></div>`;
  const html = page(
    '<title>Ferry to run every twenty minutes - Harbour Herald</title>',
    `<div id="content">
      ${menu('Classifieds', ['Buy a car', 'Sell a car', 'Find a dealer', 'Search homes for sale', 'Find an agent', 'Place an ad', 'Search for a job', 'Post your resume'])}
      <div class="story"><h1>Ferry to run every twenty minutes</h1>${brief.map((sentence) => `<p>${sentence}</p>`).join('')}</div>
      ${menu('More local news', ['Market hall to reopen in spring', 'School run lanes come to the old town', 'Lifeboat crew rescues two kayakers'])}
    </div>`,
  );
  const extracted = extractHtml(html, 'https://herald.example/local/ferry-every-twenty-minutes');
  t.is(extracted.pageType, 'other');
  for (const sentence of brief) t.true(extracted.text.includes(sentence), sentence);
  t.notRegex(extracted.text, /Sell a car|Post your resume|Market hall/);
});

test("a story beside more headlines, each with a one-line blurb, keeps the story alone: blurbs are no paragraphs the block left out", (t) => {
  const story = [
    'The river authority opened the new weir on Tuesday, two years after the floods that cut the valley road for a month and closed the school.',
    'Engineers say the weir will hold back twice the water of the old one, and that the fish pass beside it lets salmon reach the upper pools again.',
    'Farmers downstream, who lost their winter feed in the floods, asked the authority to publish how high the water may rise before the gates open.',
  ];
  const teasers = [
    ['Bus timetable changes from May', 'Two routes will run less often on Sundays.'],
    ['Library extends its opening hours', 'The branch will open until eight on weekdays.'],
    ['Council approves the new car park', 'Work starts in June and should end by autumn.'],
    ['Market returns to the square', 'Stalls are back every Saturday from next week.'],
    ['School wins regional choir prize', 'The pupils sang at the cathedral on Friday.'],
    ['Footbridge closed for repairs', 'Walkers are asked to use the road bridge.'],
    ['Police appeal after break-in', 'A shop on the high street was entered overnight.'],
    ['Cinema to show classic films', 'A season of old favourites starts on Monday.'],
  ];
  const html = page(
    '<title>New weir opens two years after the floods - Valley Gazette</title><meta property="og:type" content="article">',
    `<div id="page">
      <div class="story"><h1>New weir opens two years after the floods</h1>${story.map((sentence) => `<p>${sentence}</p>`).join('')}</div>
      <div class="more"><h2>More from the valley</h2>${teasers
        .map(([headline, blurb], index) => `<div class="item"><h3><a href="/news/${index + 10}">${headline}</a></h3><p>${blurb}</p></div>`)
        .join('')}</div>
    </div>`,
  );
  const extracted = extractHtml(html, 'https://gazette.example/news/new-weir-opens');
  t.is(extracted.pageType, 'article');
  for (const sentence of story) t.true(extracted.text.includes(sentence), sentence);
  t.notRegex(extracted.text, /Bus timetable|Stalls are back|classic films/);
});

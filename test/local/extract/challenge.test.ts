import test from 'ava';
import { extractHtml } from '../../../src/local/extract/index.js';

const CLOUDFLARE = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">news.example</h1><h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<noscript><div class="h2">Enable JavaScript and cookies to continue</div></noscript>
<div id="challenge-body-text" class="core-msg spacer">news.example needs to review the security of your connection before proceeding.</div>
<form id="challenge-form" action="/article?__cf_chl_f_tk=abc" method="POST"></form></div></div>
<script>(function(){window._cf_chl_opt={cvId: '2'};})();</script></body></html>`;

const ATTENTION_REQUIRED = `<html><head><title>Attention Required! | Cloudflare</title></head><body><div id="cf-wrapper">
<h1>Sorry, you have been blocked</h1><h2>You are unable to access news.example</h2>
<p>This website is using a security service to protect itself from online attacks.</p></div></body></html>`;

const HCAPTCHA_WALL = `<html><head><title>news.example</title></head><body><div class="wall">
<p>Please complete the security check to access news.example</p>
<form method="post"><div class="h-captcha" data-sitekey="10000000-ffff-ffff-ffff-000000000001"></div><button>Submit</button></form>
</div></body></html>`;

const RECAPTCHA_ROBOT = `<html><head><title>Are you a robot?</title></head><body>
<h1>Are you a robot?</h1><p>Our systems have detected unusual traffic from your computer network.</p>
<div class="g-recaptcha" data-sitekey="key"></div></body></html>`;

const ACCESS_DENIED = `<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>
You don't have permission to access "http://news.example/article" on this server.<P>Reference #18.5f3c1402.1700000000.1a2b3c</BODY></HTML>`;

for (const [name, html] of Object.entries({ CLOUDFLARE, ATTENTION_REQUIRED, HCAPTCHA_WALL, RECAPTCHA_ROBOT, ACCESS_DENIED })) {
  test(`${name} is a challenge page and yields no text`, (t) => {
    const extracted = extractHtml(html, 'https://news.example/article');
    t.true(extracted.isChallenge);
    t.is(extracted.text, '');
  });
}

test('an article about CAPTCHAs, with a reCAPTCHA on its comment form, is not a challenge', (t) => {
  const paragraphs = [
    'CAPTCHA walls have become a daily annoyance. "Are you a robot?" asks the box, and millions click "I\'m not a robot" every day.',
    'Researchers who study bot detection say the checks rarely stop determined scrapers, while they slow down people on older devices.',
    'Cloudflare pages that say "Just a moment..." or "Checking your browser before accessing" are now a familiar sight on news sites.',
    'Accessibility advocates argue that audio alternatives are hard to use, and that the puzzles discriminate against blind users.',
    'Several browser vendors are working on private tokens that would let a site know a visitor is human without asking them to solve anything.',
  ];
  const html = `<html><head><title>Why CAPTCHAs are everywhere</title></head><body><article><h1>Why CAPTCHAs are everywhere</h1>
    ${paragraphs.map((paragraph) => `<p>${paragraph} ${paragraph}</p>`).join('\n')}</article>
    <section id="comments"><form><textarea></textarea><div class="g-recaptcha" data-sitekey="k"></div></form></section></body></html>`;
  const extracted = extractHtml(html, 'https://news.example/captcha');
  t.false(extracted.isChallenge);
  t.regex(extracted.text, /Researchers who study bot detection/);
});

/**
 * Interstitials: bot challenges, CAPTCHA walls and access-denied pages served in place of the page
 * asked for. Their text must never be stored or returned as if it were the page's.
 *
 * Every interstitial is short: a heading, a sentence or two, a widget. So a page is only judged a
 * challenge when its visible text is short; a long article that discusses CAPTCHAs, or that carries
 * a reCAPTCHA in its comment form, has far more text than any wall and passes.
 */
import { ELEMENT_NODE, TEXT_NODE, normalizeSpace, type DomDocument, type DomNode } from './dom.js';

/** Interstitials seen in the wild stay well under this; real articles are well above it. */
const MAX_CHALLENGE_TEXT_LENGTH = 1500;
/**
 * Weaker signals (a CAPTCHA widget, a telltale sentence) also occur on short real pages: a contact
 * form, a news brief quoting "I'm not a robot". They count only on pages with next to no text.
 */
const MAX_TEXT_FOR_WEAK_SIGNALS = 600;

/** Titles that anti-bot services and CDNs give their challenge and block pages. */
const CHALLENGE_TITLES = [
  /^just a moment\s*(\.\.\.|…)?$/i,
  /^attention required!?\s*(\|\s*cloudflare)?$/i,
  /^checking (your|if the site connection is secure|the site connection)/i,
  /^please wait\s*(\.\.\.|…)?\s*(\|\s*cloudflare)?$/i,
  /^one more step\b/i,
  /^ddos-guard$/i,
  /^access denied\b/i,
  /^(403 )?forbidden$/i,
  /^are you (a )?(robot|human)\??/i,
  /^(security|human|bot) (check|verification)/i,
  /^verify(ing)? (you are|that you are) (a )?human/i,
  /^pardon our interruption/i,
  /^you have been blocked/i,
  /^request rejected/i,
  /sucuri website firewall/i,
];

/** Markup only challenge pages carry: scripts, forms and ids of the anti-bot services. */
const CHALLENGE_MARKUP = [
  '#challenge-form',
  '#challenge-running',
  '#challenge-stage',
  '#cf-challenge-running',
  '.cf-browser-verification',
  '#cf-wrapper .cf-error-type',
  'form[action*="__cf_chl"]',
  'script[src*="/cdn-cgi/challenge-platform/h/"]',
  'script[src*="captcha-delivery.com"]',
  'iframe[src*="captcha-delivery.com"]',
  '#px-captcha',
  'script[src*="/_Incapsula_Resource"]',
  'iframe[src*="/_Incapsula_Resource"]',
  '#sec-if-cpt-container',
];

/** CAPTCHA widgets: a wall when they are all there is, a comment form's guard otherwise. */
const CAPTCHA_WIDGETS = ['.h-captcha', '.g-recaptcha', '.cf-turnstile', 'iframe[src*="hcaptcha.com"]', 'iframe[src*="/recaptcha/"]'];

/** What the visible text of a wall says. */
const CHALLENGE_PHRASES = [
  /checking (if the site connection is secure|your browser before accessing)/i,
  /enable javascript and cookies to continue/i,
  /verify(ing)? (that )?you are (a )?human/i,
  /are you a robot\??/i,
  /i'?m not a robot/i,
  /(unusual|suspicious) traffic from your (computer )?network/i,
  /complete the security check to access/i,
  /please (complete|solve) the (captcha|challenge)/i,
  /press (&|and) hold/i,
  /you don'?t have permission to access .* on this server/i,
  /access to this page has been denied/i,
  /request unsuccessful\. incapsula incident id/i,
  /sorry, you have been blocked/i,
  /ddos protection by/i,
  /please turn javascript on and reload the page/i,
];

const INVISIBLE_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);

/**
 * The text a reader would see (scripts and styles say nothing to them), collected only up to
 * `limit` characters: past that the page is no interstitial and the rest need not be read.
 */
function visibleText(document: DomDocument, limit: number): string {
  const pieces: string[] = [];
  let length = 0;
  const walk = (node: DomNode): void => {
    if (length > limit) return;
    if (node.nodeType === TEXT_NODE) {
      const piece = normalizeSpace(node.textContent);
      if (piece) {
        pieces.push(piece);
        length += piece.length + 1;
      }
    } else if (node.nodeType === ELEMENT_NODE && !INVISIBLE_TAGS.has(node.nodeName)) {
      for (let child = node.firstChild; child; child = child.nextSibling) walk(child);
    }
  };
  if (document.body) walk(document.body);
  return pieces.join(' ');
}

export function isChallengePage(document: DomDocument): boolean {
  const text = visibleText(document, MAX_CHALLENGE_TEXT_LENGTH);
  if (text.length > MAX_CHALLENGE_TEXT_LENGTH) return false;
  const title = normalizeSpace(document.querySelector('title')?.textContent);
  if (CHALLENGE_TITLES.some((pattern) => pattern.test(title))) return true;
  if (CHALLENGE_MARKUP.some((selector) => document.querySelector(selector) !== null)) return true;
  if (text.length > MAX_TEXT_FOR_WEAK_SIGNALS) return false;
  return (
    CAPTCHA_WIDGETS.some((selector) => document.querySelector(selector) !== null) ||
    CHALLENGE_PHRASES.some((pattern) => pattern.test(text))
  );
}

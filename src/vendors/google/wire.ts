/**
 * Google's Custom Search JSON API v1 (Programmable Search Engine), both directions: what searchgate
 * asks Google (search.ts) and what it answers Google's clients (dialect.ts). Sources: the discovery
 * document customsearch.v1 bundled with google-api-python-client (method cse.list, schemas Search,
 * Query, Result), https://developers.google.com/custom-search/v1/reference/rest/v1/cse/list, and
 * Google's error model https://cloud.google.com/apis/design/errors.
 */
import type { FreshnessPreset } from '../../api/freshness.js';
import type { Unchecked } from '../../providers/types.js';

export const GOOGLE_SEARCH_PATH = '/customsearch/v1';
/** The same search, for engines restricted to their sites (LangChain's `siterestrict=True`). */
export const GOOGLE_SITERESTRICT_PATH = '/customsearch/v1/siterestrict';

/** Where Google also takes an API key, besides the `key` query parameter. */
export const GOOGLE_KEY_HEADER = 'x-goog-api-key';

/** num is 1..10. */
export const GOOGLE_MAX_NUM = 10;
/** The API never returns a result past the 100th, however many match. */
export const GOOGLE_MAX_RESULTS = 100;

/** searchgate's presets as dateRestrict values. */
export const GOOGLE_DATE_RESTRICT_PRESETS: Readonly<Record<FreshnessPreset, string>> = { oneDay: 'd1', oneWeek: 'w1', oneMonth: 'm1', oneYear: 'y1' };

/** dateRestrict: d, w, m or y and a count (d7: the last 7 days). */
export const GOOGLE_DATE_RESTRICT = /^([dwmy])(\d*)$/;

/** The "restrict to range" sort on Google's estimate of each page's date: date:r:YYYYMMDD:YYYYMMDD. */
export const GOOGLE_DATE_RANGE_SORT = /^date:r:(\d{8})?:(\d{8})?$/;

/** A range of YYYY-MM-DD days as the date-range sort expression. */
export const googleDateRangeSort = (startDay: string, endDay: string) => `date:r:${startDay.replaceAll('-', '')}:${endDay.replaceAll('-', '')}`;

/** A YYYYMMDD bound of the date-range sort as YYYY-MM-DD. */
export const isoDayOfCompactDay = (day: string) => `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}`;

/** The languages lr can restrict to (lang_zh-CN and lang_zh-TW aside), per the cse.list reference. */
export const GOOGLE_LR_LANGUAGES = new Set('ar bg ca cs da de el en es et fi fr hr hu id is it iw ja ko lt lv nl no pl pt ro ru sk sl sr sv tr'.split(' '));

/** Google keeps old codes where BCP 47 has moved on: Hebrew iw, Norwegian no (for Bokmål and Nynorsk). */
export const GOOGLE_LANGUAGE_CODES: Readonly<Record<string, string>> = { he: 'iw', nb: 'no', nn: 'no' };

/** `lr`'s values: lang_ and a language code. */
export const GOOGLE_LR_PREFIX = 'lang_';

const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/**
 * A Google language code (hl's en, zh-CN, iw, pt_BR) as a BCP 47 tag; null when it is none. Only
 * Hebrew needs translating back: Google's no is Norwegian in BCP 47 as well.
 */
export function languageOfGoogleCode(code: string): string | null {
  const tag = code.trim().replace(/_/g, '-');
  if (!LANGUAGE_TAG.test(tag)) return null;
  return tag.toLowerCase() === GOOGLE_LANGUAGE_CODES.he ? 'he' : tag;
}

/** cse.list's query parameters, as the API names them (integers travel as strings). */
export type GoogleSearchParameters = {
  key?: string;
  cx: string;
  q: string;
  num?: number;
  /** 1-based index of the first result. */
  start?: number;
  dateRestrict?: string;
  sort?: string;
  siteSearch?: string;
  siteSearchFilter?: 'i' | 'e';
  exactTerms?: string;
  excludeTerms?: string;
  lr?: string;
  hl?: string;
  gl?: string;
  safe?: 'active' | 'off';
  searchType?: string;
  alt?: string;
};

/** A Query of queries.request / queries.nextPage: the request as Google read it. */
export interface GoogleQuery {
  title: string;
  /** A decimal string. */
  totalResults: string;
  searchTerms: string;
  count: number;
  startIndex: number;
  inputEncoding: string;
  outputEncoding: string;
  safe: string;
  cx: string;
  dateRestrict?: string;
  sort?: string;
  siteSearch?: string;
  siteSearchFilter?: string;
  exactTerms?: string;
  excludeTerms?: string;
  /** lr, as Query names it. */
  language?: string;
}

export interface GoogleResult {
  kind: 'customsearch#result';
  title: string;
  htmlTitle: string;
  link: string;
  displayLink: string;
  snippet: string;
  htmlSnippet: string;
  formattedUrl: string;
  htmlFormattedUrl: string;
  /** The page's structured data; metatags[0] holds its <meta> tags. */
  pagemap?: { metatags?: Array<Record<string, string>> };
}

/** The Search resource cse.list answers. */
export interface GoogleSearchResponse {
  kind: 'customsearch#search';
  url: { type: 'application/json'; template: string };
  queries: { request: GoogleQuery[]; nextPage?: GoogleQuery[] };
  context: { title: string };
  searchInformation: { searchTime: number; formattedSearchTime: string; totalResults: string; formattedTotalResults: string };
  /** Absent, not empty, when nothing matched. */
  items?: GoogleResult[];
}

/** A reply as it arrives from Google: every field still to be checked. */
export type GoogleReply = Unchecked<GoogleSearchResponse>;

/** The meta tag that dates a page in pagemap.metatags. */
export const GOOGLE_PUBLISHED_METATAG = 'article:published_time';

/** google.rpc.ErrorInfo, the detail that names why a call was refused (API_KEY_INVALID). */
export const GOOGLE_ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';

export interface GoogleErrorInfo {
  '@type': typeof GOOGLE_ERROR_INFO_TYPE;
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** Google's error body: the canonical status name and the older per-error reasons. */
export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    errors: Array<{ message: string; domain: string; reason: string }>;
    status: string;
    details?: GoogleErrorInfo[];
  };
}

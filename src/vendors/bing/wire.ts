/**
 * The Bing Web Search API v7 wire format, as searchgate answers Bing's clients (dialect.ts). There is
 * no Bing provider: Microsoft retired the API on 11 August 2025.
 *
 * Sources: https://learn.microsoft.com/en-us/bing/search-apis/bing-web-search/reference/query-parameters,
 * …/response-objects and …/error-codes; the ErrorCode and ErrorSubCode types of
 * @azure/cognitiveservices-websearch; Azure API Management's error body and wording, which fronted
 * the API (MicrosoftDocs/azure-docs#36456, goferito/node-bing-api#34).
 */
import type { Period } from '../../dialects/search.js';

/** The API's root (web search is below it; answers' ids are fragments of it). */
export const BING_API_PATH = '/v7.0';
export const BING_SEARCH_PATH = `${BING_API_PATH}/search`;
/** Where Bing (Azure API Management) takes the key. */
export const BING_KEY_HEADER = 'Ocp-Apim-Subscription-Key';

/** count: 10 when not given, at most 50. */
export const BING_DEFAULT_COUNT = 10;
export const BING_MAX_COUNT = 50;

/** freshness: Day, Week or Month (in any case), a day YYYY-MM-DD, or a range of days YYYY-MM-DD..YYYY-MM-DD. */
export const BING_FRESHNESS_PERIODS: ReadonlyMap<string, Period> = new Map([
  ['day', 'day'],
  ['week', 'week'],
  ['month', 'month'],
]);
export const BING_DATE_RANGE = /^(\d{4}-\d{2}-\d{2})(?:\.\.(\d{4}-\d{2}-\d{2}))?$/;

/** The answer type responseFilter names for web results. */
export const BING_WEBPAGES_ANSWER = 'webpages';

/** The query parameters of a web search. */
export type BingSearchParameters = {
  q: string;
  count?: number;
  offset?: number;
  freshness?: string;
  mkt?: string;
  setLang?: string;
  /** Raw (the default) or HTML, where the text's HTML characters are escaped. */
  textFormat?: string;
  textDecorations?: boolean;
  /** Comma-separated answer types to include (Webpages, News…), or to exclude with a leading "-". */
  responseFilter?: string;
  safeSearch?: 'Off' | 'Moderate' | 'Strict';
  answerCount?: number;
  promote?: string;
  cc?: string;
};

export interface BingWebPage {
  /** An id unique within the answer (bingWebPageId). */
  id: string;
  name: string;
  url: string;
  displayUrl: string;
  snippet: string;
  datePublished?: string;
  dateLastCrawled?: string;
}

export interface BingWebAnswer {
  webSearchUrl: string | null;
  totalEstimatedMatches: number;
  value: BingWebPage[];
}

/** A search's answer; webPages is left out when nothing matched, as Bing does. */
export interface BingSearchResponse {
  _type: 'SearchResponse';
  queryContext: { originalQuery: string };
  webPages?: BingWebAnswer;
}

/** The id of the i-th web result: a fragment of the API's root URL, `https://api.bing.microsoft.com/v7.0/#WebPages.0`. */
export const bingWebPageId = (apiRootUrl: string, index: number) => `${apiRootUrl}/#WebPages.${index}`;

export type BingErrorCode = 'ServerError' | 'InvalidRequest' | 'RateLimitExceeded' | 'InvalidAuthorization' | 'InsufficientAuthorization';
export type BingErrorSubCode =
  | 'UnexpectedError'
  | 'ResourceError'
  | 'NotImplemented'
  | 'ParameterMissing'
  | 'ParameterInvalidValue'
  | 'HttpNotAllowed'
  | 'Blocked'
  | 'AuthorizationMissing'
  | 'AuthorizationRedundancy'
  | 'AuthorizationDisabled'
  | 'AuthorizationExpired';

export interface BingError {
  code: BingErrorCode;
  subCode?: BingErrorSubCode;
  message: string;
  /** The query parameter at fault, and the value sent. */
  parameter?: string;
  value?: string;
}

/** Bing's own error body: request and server errors. */
export interface BingErrorResponse {
  _type: 'ErrorResponse';
  errors: BingError[];
}

/** Azure API Management's error body, which answered for Bing on key, quota and rate errors: the status as a string. */
export interface ApimErrorBody {
  error: { code: string; message: string };
}

/** Bing's and API Management's sentences. */
export const BING_MESSAGES = {
  parameterMissing: 'Required parameter is missing.',
  parameterInvalid: 'Parameter has invalid value.',
  keyMissing: 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.',
  keyInvalid:
    'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  /** `HH:MM:SS` until the quota is replenished. */
  quotaExceeded: (replenishedIn: string) => `Out of call volume quota. Quota will be replenished in ${replenishedIn}.`,
  rateLimited: (retrySeconds: number) => `Rate limit is exceeded. Try again in ${retrySeconds} seconds.`,
} as const;

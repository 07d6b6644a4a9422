import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { hostWithoutWww } from '../util/domains.js';
import { badRequest } from './errors.js';
import { freshnessProblem, parseFreshness, type Freshness } from './freshness.js';
import {
  DEFAULT_COUNT,
  DEFAULT_MAX_CHARACTERS,
  DEFAULT_RERANK_MODEL,
  errorBodySchema,
  rerankRequestSchema,
  rerankResponseSchema,
  searchResultSchema,
  webSearchRequestSchema,
  webSearchResponseSchema,
  type RerankLimits,
} from './schemas.js';

/** A web-search request after validation, with every default applied. */
export interface WebSearchRequest {
  query: string;
  count: number;
  /**
   * Results to skip before the `count` returned: vendor dialects page this way (Brave's offset,
   * Google's start). Not part of /v1/web-search, where it is always 0.
   */
  offset: number;
  freshness: Freshness;
  includeDomains: string[];
  excludeDomains: string[];
  /** null in snippet mode. */
  text: TextMode | null;
  summary: boolean;
  /** BCP 47 tag, or null for the upstream's default. */
  language: string | null;
}

/** How page text is rendered: plain text, or markdown where the page's markup is at hand. */
export type TextFormat = 'text' | 'markdown';

export interface TextMode {
  /** Per-result cap, in Unicode code points. */
  maxCharacters: number;
  /** Absent: plain text (the dialects' text, R7 of the dialect spec). */
  format?: TextFormat;
}

export interface RerankRequest {
  model: string;
  query: string;
  documents: string[];
  topN: number;
  returnDocuments: boolean;
}

/** A web-search request built by a dialect: the fields it sets, every other one at its default. */
export function webSearchRequest(fields: Partial<WebSearchRequest> & Pick<WebSearchRequest, 'query'>): WebSearchRequest {
  return {
    count: DEFAULT_COUNT,
    offset: 0,
    freshness: parseFreshness('noLimit'),
    includeDomains: [],
    excludeDomains: [],
    text: null,
    summary: false,
    language: null,
    ...fields,
  };
}

export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, allowUnionTypes: true });
  ajv.addFormat('freshness', (value: string) => freshnessProblem(value) === null);
  return ajv;
}

/** Turns ajv's errors into one sentence a client can act on, naming each field by its JSON path. */
export function describeErrors(errors: ErrorObject[] | null | undefined, data: unknown): string {
  if (!errors?.length) return 'invalid request';
  const sentences = new Set<string>();
  for (const error of errors) {
    const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.').replace(/\.(\d+)(?=\.|$)/g, '[$1]');
    const subject = field || 'request body';
    switch (error.keyword) {
      case 'required':
        sentences.add(`${field ? field + '.' : ''}${String(error.params.missingProperty)} is required`);
        break;
      case 'pattern':
      case 'format':
        if (field === 'freshness') {
          sentences.add(freshnessProblem(String(valueAt(data, error.instancePath))) ?? `${subject} is invalid`);
        } else if (error.params.pattern === '\\S') {
          sentences.add(`${subject} must not be empty or blank`);
        } else {
          sentences.add(`${subject} is invalid`);
        }
        break;
      case 'minLength':
        sentences.add(`${subject} must not be empty`);
        break;
      case 'type':
        sentences.add(`${subject} must be ${String(error.params.type).replace(',', ' or ')}`);
        break;
      default:
        sentences.add(`${subject} ${error.message ?? 'is invalid'}`);
    }
  }
  return [...sentences].join('; ');
}

function valueAt(data: unknown, pointer: string): unknown {
  let node: unknown = data;
  for (const part of pointer.split('/').slice(1)) {
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  }
  return node;
}

function ensureObjectBody(body: unknown): asserts body is Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('request body must be a JSON object');
  }
}

export class RequestValidator {
  private readonly webSearch: ValidateFunction;
  private readonly rerank: ValidateFunction;

  constructor(readonly ajv: Ajv2020, rerankLimits: RerankLimits) {
    this.webSearch = ajv.compile(webSearchRequestSchema);
    this.rerank = ajv.compile(rerankRequestSchema(rerankLimits));
  }

  parseWebSearch(body: unknown): WebSearchRequest {
    ensureObjectBody(body);
    if (!this.webSearch(body)) throw badRequest(describeErrors(this.webSearch.errors, body));
    const input = body as {
      query: string;
      count?: number;
      freshness?: string;
      includeDomains?: string[];
      excludeDomains?: string[];
      contents?: { text?: boolean | { max_characters?: number; format?: TextFormat } };
      summary?: boolean;
      language?: string;
    };
    const textOption = input.contents?.text ?? false;
    return {
      query: input.query,
      count: Math.max(1, input.count ?? DEFAULT_COUNT),
      offset: 0,
      freshness: parseFreshness(input.freshness ?? 'noLimit'),
      includeDomains: normalizeDomains(input.includeDomains),
      excludeDomains: normalizeDomains(input.excludeDomains),
      text: textOption === false ? null : textModeOf(textOption),
      summary: input.summary ?? false,
      language: input.language ?? null,
    };
  }

  /**
   * The rerank body of LangSearch, Cohere v1 and v2 and Jina (../shared/spec/dialects.md §4.1–4.2):
   * `null` in an optional field means "not given"; documents are strings or objects with `text`, or
   * with the fields `rank_fields` names; truncation knobs are accepted and change nothing, since
   * long documents are windowed, not cut.
   */
  parseRerank(body: unknown): RerankRequest {
    ensureObjectBody(body);
    if (!this.rerank(body)) throw badRequest(describeErrors(this.rerank.errors, body));
    const input = body as {
      model?: string | null;
      query: string;
      documents: Array<string | Record<string, unknown>>;
      top_n?: number | null;
      return_documents?: boolean | null;
      rank_fields?: string[] | null;
    };
    const documents = input.documents.map((document, i) => documentText(document, i, input.rank_fields ?? null));
    return {
      model: input.model ?? DEFAULT_RERANK_MODEL,
      query: input.query,
      documents,
      topN: Math.min(input.top_n ?? documents.length, documents.length),
      returnDocuments: input.return_documents ?? false,
    };
  }
}

/**
 * The text of one rerank document. With `rank_fields` (Cohere v1), an object's text is one line
 * `field: value` per listed field it has, in the listed order; otherwise its `text`. An image
 * (jina-reranker-m0's `{image}`) is refused: searchgate ranks text.
 */
function documentText(document: string | Record<string, unknown>, index: number, rankFields: readonly string[] | null): string {
  if (typeof document === 'string') return document;
  if (rankFields) {
    return rankFields
      .filter((field) => document[field] !== undefined && document[field] !== null)
      .map((field) => `${field}: ${typeof document[field] === 'string' ? document[field] : JSON.stringify(document[field])}`)
      .join('\n');
  }
  if (typeof document.text === 'string') return document.text;
  if (document.image !== undefined) throw badRequest(`documents[${index}] is an image; searchgate ranks text documents only`);
  throw badRequest(`documents[${index}].text is required (or name the fields to rank with rank_fields)`);
}

/**
 * Domains are compared by host name: "https://www.Example.com/x" is taken as "example.com" so that a
 * client pasting a URL gets what it meant. A domain matches itself and its subdomains.
 */
export function normalizeDomain(entry: string): string {
  let host = entry.trim().toLowerCase();
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/[/?#].*$/, '').replace(/:\d+$/, '');
  return hostWithoutWww(host.replace(/^\*\./, ''));
}

function normalizeDomains(list: string[] | undefined): string[] {
  return [...new Set((list ?? []).map(normalizeDomain).filter((domain) => domain.length > 0))];
}

/** Validators for our own responses; the tests hold every reply to the published schemas. */
export function responseValidators(ajv: Ajv2020) {
  ajv.addSchema(searchResultSchema);
  return {
    webSearch: ajv.compile(webSearchResponseSchema),
    rerank: ajv.compile(rerankResponseSchema),
    error: ajv.compile(errorBodySchema),
  };
}

/** The text option of /v1: true, or an object with a cap and a format, each defaulted. */
function textModeOf(option: true | { max_characters?: number; format?: TextFormat }): TextMode {
  if (option === true) return { maxCharacters: DEFAULT_MAX_CHARACTERS };
  const mode: TextMode = { maxCharacters: option.max_characters ?? DEFAULT_MAX_CHARACTERS };
  if (option.format === 'markdown') mode.format = 'markdown';
  return mode;
}

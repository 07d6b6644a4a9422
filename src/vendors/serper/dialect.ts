/**
 * Serper's Google search API as searchgate serves it to Serper's clients (litellm's `serper` search
 * provider, LangChain's GoogleSerperAPIWrapper): ../shared/spec/dialects.md §5.6, §7.9.
 *
 * Served: POST (and GET) /serper/search, with the key in X-API-KEY, else `Authorization: Bearer`.
 * Parameters come from the JSON body and the query string, the body winning: litellm posts a JSON
 * body; LangChain posts them as query parameters with no body at all.
 *
 * Pointing a client here: litellm `search(…, search_provider="serper", api_base=BASE + "/serper",
 * api_key=KEY)`. LangChain's wrapper builds its URL inline, so its module's `requests` is swapped
 * for one that rewrites the host (§6.7):
 * `gs.requests = types.SimpleNamespace(post=lambda url, **kw: requests.post(url.replace("https://google.serper.dev", BASE + "/serper"), **kw))`.
 *
 * Honoured: q (site: operators become domain filters, litellm's `(q) (site:a OR site:b)` included:
 * R8), num (1..100; 51–100 are served as 50, searchgate's maximum), page (offset (page − 1) × num:
 * R10), tbs (qdr:h|d|w|m|y with an optional count, and cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY: R9;
 * hours are served at day granularity, which is wider than asked; other tbs options such as sbd:1 are
 * ignored), hl (the language). Accepted and ignored: gl (echoed), location, autocorrect, type.
 *
 * Answers carry `searchParameters` (no `engine`: searchgate is not Google), `organic` with ISO 8601
 * days as `date`, and `credits`: the allowance units charged (0 for operator keys). No answer box,
 * knowledge graph, "people also ask" or related searches. Errors are Serper's
 * `{"message", "statusCode"}` (observed live: crewAIInc/crewAI#633), with a reason phrase that carries
 * the message, since LangChain shows only requests' HTTPError text (R11).
 */
import { badRequest } from '../../api/errors.js';
import { utcDayStart, type Freshness } from '../../api/freshness.js';
import { MAX_COUNT } from '../../api/schemas.js';
import { webSearchRequest } from '../../api/validate.js';
import { reasonPhrase, vendorMessage } from '../../dialects/errors.js';
import { IGNORED_PARAMETER, readQueryAndBody, type ParameterSchema } from '../../dialects/params.js';
import { dateRange, lastPeriods, queryAndSites, snippetOf, titleOf, type Period } from '../../dialects/search.js';
import { searchRoute, type Dialect, type DialectFailure, type ErrorReply } from '../../dialects/types.js';
import { languageOfGoogleCode } from '../google/wire.js';
import {
  SERPER_DEFAULT_NUM,
  SERPER_KEY_HEADER,
  SERPER_MAX_NUM,
  SERPER_SEARCH_PATH,
  SERPER_TBS_RECENT,
  SERPER_UNAUTHORIZED,
  isoDayOfUsDate,
  type SerperEcho,
  type SerperError,
  type SerperResponse,
  type SerperSearchParameters,
} from './wire.js';


const parametersSchema: ParameterSchema = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string', pattern: '\\S', description: "The query; site:x and -site:x become domain filters, as does litellm's (q) (site:a OR site:b)." },
    num: {
      type: 'integer',
      minimum: 1,
      maximum: SERPER_MAX_NUM,
      default: SERPER_DEFAULT_NUM,
      description: `Results per page; values above ${MAX_COUNT} are served as ${MAX_COUNT}.`,
    },
    page: { type: 'integer', minimum: 1, default: 1, description: 'Page number: results (page − 1) × num + 1 onwards.' },
    tbs: {
      type: 'string',
      description: 'Time filter: qdr:h|d|w|m|y with an optional count (qdr:d7), or cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY. Hours are served as whole days.',
    },
    hl: { type: 'string', description: 'Preferred result language, a Google language code (en, pt-br).' },
    gl: { type: 'string', description: 'Echoed; no country is searched in particular.' },
    location: IGNORED_PARAMETER,
    autocorrect: IGNORED_PARAMETER,
    type: IGNORED_PARAMETER,
  },
};

const TBS_PERIODS: Readonly<Record<string, Period>> = { d: 'day', w: 'week', m: 'month', y: 'year' };
const HOURS_PER_DAY = 24;

/** The freshness a tbs value asks for; undefined when it sets none. */
function freshnessOfTbs(tbs: string, nowMs: number): Freshness | undefined {
  const options = tbs.split(',').map((option) => option.trim());
  const invalid = (problem: string) => badRequest(`tbs: ${problem}`, { parameter: 'tbs', location: 'query', problem: 'invalid', value: tbs });
  if (options.includes('cdr:1')) {
    const bound = (name: string) => {
      const value = options.find((option) => option.startsWith(`${name}:`))?.slice(name.length + 1);
      if (value === undefined || value === '') return undefined;
      const day = isoDayOfUsDate(value);
      if (day === null || utcDayStart(day) === null) throw invalid(`${name} ${value} is not a date M/D/YYYY`);
      return day;
    };
    return dateRange(bound('cd_min'), bound('cd_max'), nowMs, { parameter: 'tbs', location: 'query' });
  }
  const recent = options.find((option) => option.startsWith('qdr:'));
  if (recent === undefined) return undefined;
  const match = SERPER_TBS_RECENT.exec(recent);
  const count = match?.[2] ? Number(match[2]) : 1;
  if (!match || count < 1) throw invalid(`${recent} is not qdr:h, qdr:d, qdr:w, qdr:m or qdr:y with an optional count`);
  // Day granularity: a number of hours is served as the whole days that cover them.
  return match[1] === 'h' ? lastPeriods(Math.ceil(count / HOURS_PER_DAY), 'day', nowMs) : lastPeriods(count, TBS_PERIODS[match[1]!]!, nowMs);
}

function serperErrors({ error, kind }: DialectFailure): ErrorReply {
  // Serper answers every key it does not accept with 403 "Unauthorized.".
  const refusedKey = kind === 'missing_key' || kind === 'invalid_key' || kind === 'disabled_account';
  const status = refusedKey ? 403 : error.status;
  const message = refusedKey ? vendorMessage(SERPER_UNAUTHORIZED, error) : error.message;
  const body: SerperError = { message, statusCode: status };
  return { status, body, reason: reasonPhrase(status, error.message) };
}

export const serperDialect: Dialect = {
  name: 'serper',
  prefixes: ['/serper'],
  keys: [{ in: 'header', name: SERPER_KEY_HEADER }, { in: 'bearer' }],
  keyHint: 'send "X-API-KEY: <API_KEY>" or "Authorization: Bearer <API_KEY>"',
  renderError: serperErrors,
  routes: [
    searchRoute<SerperEcho>({
      operation: 'search',
      methods: ['GET', 'POST'],
      path: `/serper${SERPER_SEARCH_PATH}`,
      read(input, tools) {
        const parameters = readQueryAndBody<SerperSearchParameters>(parametersSchema, input.query, input.body);
        const num = parameters.num ?? SERPER_DEFAULT_NUM;
        const page = parameters.page ?? 1;
        const nowMs = tools.now();
        const freshness = parameters.tbs ? freshnessOfTbs(parameters.tbs, nowMs) : undefined;
        const language = parameters.hl ? languageOfGoogleCode(parameters.hl) : null;
        return {
          request: webSearchRequest({
            ...queryAndSites(parameters.q, 'q'),
            count: Math.min(num, MAX_COUNT),
            offset: (page - 1) * num,
            language,
            ...(freshness ? { freshness } : {}),
          }),
          echo: {
            q: parameters.q,
            ...(parameters.gl ? { gl: parameters.gl } : {}),
            ...(parameters.hl ? { hl: parameters.hl } : {}),
            ...(parameters.tbs ? { tbs: parameters.tbs } : {}),
            num,
            page,
            type: 'search',
          },
        };
      },
      render: ({ request, echo, outcome, units }): SerperResponse => ({
        searchParameters: echo,
        organic: outcome.results.map((result, i) => ({
          title: titleOf(result),
          link: result.url,
          snippet: snippetOf(result),
          ...(result.datePublished ? { date: result.datePublished.slice(0, 10) } : {}),
          position: request.offset + i + 1,
        })),
        credits: units,
      }),
      docs: {
        summary: 'Serper Google search: parameters in the JSON body or the query string (the body wins)',
        parameters: parametersSchema,
        body: parametersSchema,
      },
    }),
  ],
};

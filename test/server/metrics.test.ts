import test from 'ava';
import { assertPromtoolAccepts, metricIn } from '../helpers/faults.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';

test('metrics count requests, upstream calls, cache hits and in-flight, and pass promtool', async (t) => {
  let failNext = true;
  const upstream = await startUpstream((_request, res) => {
    if (failNext) {
      failNext = false;
      sendJson(res, 500, { message: 'boom' });
      return;
    }
    sendJson(res, 200, searchEnvelope([{ url: 'https://a.example/', name: 'A', snippet: 's' }]));
  });
  const gateway = await startGateway(upstreamConfig(upstream.url));
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  await gateway.post('/v1/web-search', { query: 'metrics' });
  await gateway.post('/v1/web-search', { query: 'metrics' });
  await gateway.post('/v1/web-search', { query: '' });
  const response = await fetch(`${gateway.url}/metrics`);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /text\/plain/);
  const text = await response.text();
  t.is(metricIn(text, 'searchgate_http_requests_total', { route: '/v1/web-search', status: '200' }), 2);
  t.is(metricIn(text, 'searchgate_http_requests_total', { route: '/v1/web-search', status: '400' }), 1);
  t.is(metricIn(text, 'searchgate_http_request_duration_seconds_count', { route: '/v1/web-search', status: '200' }), 2);
  t.is(metricIn(text, 'searchgate_upstream_requests_total', { provider: 'up', operation: 'search', outcome: 'unavailable' }), 1);
  t.is(metricIn(text, 'searchgate_upstream_requests_total', { provider: 'up', operation: 'search', outcome: 'success' }), 1);
  t.is(metricIn(text, 'searchgate_upstream_retries_total', { provider: 'up', operation: 'search' }), 1);
  t.is(metricIn(text, 'searchgate_cache_hits_total', { cache: 'search' }), 1);
  t.is(metricIn(text, 'searchgate_cache_misses_total', { cache: 'search' }), 1);
  t.true(metricIn(text, 'searchgate_cache_size_bytes', { cache: 'search' }) > 0);
  t.is(metricIn(text, 'searchgate_cache_entries', { cache: 'search' }), 1);
  t.is(metricIn(text, 'searchgate_http_requests_in_flight'), 1, 'the scrape itself is in flight');
  t.regex(text, /^process_cpu_seconds_total /m);
  t.regex(text, /^nodejs_eventloop_lag_seconds /m);

  assertPromtoolAccepts(t, text);
});

test('unknown paths share one route label, so scanners cannot blow up cardinality', async (t) => {
  const gateway = await startGateway({});
  t.teardown(() => gateway.close());
  for (const path of ['/a', '/b', '/c/d']) await fetch(`${gateway.url}${path}`);
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  t.is(metricIn(text, 'searchgate_http_requests_total', { route: 'unmatched', status: '404' }), 3);
  t.false(text.includes('route="/a"'));
});

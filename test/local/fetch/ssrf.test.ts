/**
 * With allowPrivateNetworks off the fetcher must refuse every internal target before connecting.
 * Every refusal here happens before a connection is attempted, so these tests send nothing to any
 * non-loopback address; the loopback servers record that nothing reached them either.
 */
import test from 'ava';
import { FetchError, fetchPolicy, isNonPublicAddress, safeFetch } from '../../../src/local/fetch/index.js';
import type { Resolver } from '../../../src/local/fetch/index.js';
import { html, redirect, routes, startLoopbackServer } from './loopback-server.js';

const STRICT = fetchPolicy({ allowPrivateNetworks: false, timeoutMs: 3_000 });
const never = new AbortController().signal;

async function refusal(url: string, policy = STRICT): Promise<FetchError> {
  try {
    await safeFetch(url, policy, never);
  } catch (error) {
    if (error instanceof FetchError) return error;
    throw error;
  }
  throw new Error(`${url} was fetched`);
}

test('private, loopback, link-local, metadata and unspecified addresses are refused before connecting', async (t) => {
  const server = await startLoopbackServer(routes({ '/': html('secret') }));
  t.teardown(() => server.close());
  for (const url of [
    `${server.origin}/`,
    `http://[::1]:${server.port}/`,
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    `http://[::ffff:127.0.0.1]:${server.port}/`,
    'http://[::ffff:a9fe:a9fe]/',
    // Other spellings of 127.0.0.1 that the URL parser turns into it.
    `http://2130706433:${server.port}/`,
    `http://0x7f.1:${server.port}/`,
  ]) {
    const error = await refusal(url);
    t.is(error.kind, 'refused', url);
  }
  t.deepEqual(server.requests, []);
});

test('a host name that resolves to loopback is refused after resolution', async (t) => {
  const server = await startLoopbackServer(routes({ '/': html('secret') }));
  t.teardown(() => server.close());
  const error = await refusal(`http://localhost:${server.port}/`);
  t.is(error.kind, 'refused');
  t.regex(error.message, /localhost resolves to (127\.0\.0\.1|::1)/);
  t.deepEqual(server.requests, []);
});

test('metadata host names are refused without even resolving them', async (t) => {
  let lookups = 0;
  const resolve: Resolver = async () => {
    lookups += 1;
    return [{ address: '8.8.8.8', family: 4 }];
  };
  for (const url of ['http://metadata.google.internal/computeMetadata/v1/', 'http://METADATA.google.internal./']) {
    t.is((await refusal(url, { ...STRICT, resolve })).kind, 'refused', url);
  }
  t.is(lookups, 0);
});

test('one private address among several DNS answers is enough to refuse', async (t) => {
  const resolve: Resolver = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ];
  t.is((await refusal('http://mixed.example/', { ...STRICT, resolve })).kind, 'refused');
});

test('every redirect hop is checked again: a permitted host cannot bounce the fetch to loopback', async (t) => {
  const server = await startLoopbackServer(
    routes({
      '/to-ip': (response) => redirect(`http://127.0.0.1:${server.port}/secret`)(response),
      '/to-localhost': (response) => redirect(`http://localhost:${server.port}/secret`)(response),
      '/to-metadata': redirect('http://169.254.169.254/latest/meta-data/'),
      '/secret': html('secret'),
    }),
  );
  t.teardown(() => server.close());
  // "public.test" stands for a public site: the operator lets that one name through, and the
  // injected resolver points it at the test server, so only the first hop is allowed.
  const policy = { ...STRICT, allowPrivateHosts: ['public.test'], resolve: (async () => [{ address: '127.0.0.1', family: 4 }]) as Resolver };
  for (const path of ['/to-ip', '/to-localhost', '/to-metadata']) {
    const error = await refusal(`http://public.test:${server.port}${path}`, policy);
    t.is(error.kind, 'refused', path);
  }
  t.deepEqual(server.paths(), ['/to-ip', '/to-localhost', '/to-metadata']);
  t.is(server.requests[0]!.headers.host, `public.test:${server.port}`);
});

test('the connection goes to the address that was checked, resolved once per hop', async (t) => {
  const server = await startLoopbackServer(routes({ '/': html('pinned') }));
  t.teardown(() => server.close());
  let lookups = 0;
  const resolve: Resolver = async () => {
    lookups += 1;
    // A rebinding resolver: the first answer is the checked one; any later answer would differ.
    return lookups === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '192.0.2.1', family: 4 }];
  };
  const page = await safeFetch(`http://rebind.test:${server.port}/`, { ...STRICT, allowPrivateHosts: ['rebind.test'], resolve }, never);
  t.is(page.body.toString(), 'pinned');
  t.is(lookups, 1);
});

test('address classification', (t) => {
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '64:ff9b::808:808', '::ffff:8.8.8.8']) {
    t.false(isNonPublicAddress(address), address);
  }
  for (const address of [
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.100.100.200',
    '0.0.0.0', '255.255.255.255', '224.0.0.1', '::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::abcd', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', 'not-an-ip',
  ]) {
    t.true(isNonPublicAddress(address), address);
  }
});

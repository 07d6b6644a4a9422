export { safeFetch } from './safe-fetch.js';
export type { FetchedResource, FetchOptions } from './safe-fetch.js';
export { FetchError } from './errors.js';
export type { FetchErrorKind } from './errors.js';
export { DEFAULT_FETCH_POLICY, DEFAULT_USER_AGENT, ROBOTS_USER_AGENT, fetchPolicy } from './policy.js';
export type { FetchPolicy, Resolver } from './policy.js';
export { domainOf, hostWithoutWww, isHttpUrl, isWithinSite, normalizeHttpUrl, normalizeUrl } from './url.js';
export { isMetadataHostname, isNonPublicAddress } from './address.js';
export { readCappedBody } from './body.js';

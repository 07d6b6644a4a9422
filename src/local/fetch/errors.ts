export type FetchErrorKind =
  /** Not an absolute http(s) URL. */
  | 'invalid_url'
  /** The address is private, loopback, link-local or a metadata service, and the policy does not allow it. */
  | 'refused'
  /** The caller's followRedirect said no (e.g. a redirect out of the crawl's scope). */
  | 'redirect_refused'
  | 'too_many_redirects'
  /** The policy's time limit passed. */
  | 'timeout'
  /** The caller's signal aborted. */
  | 'aborted'
  /** Over the size cap, on the wire or after decompression. */
  | 'too_large'
  /** An unknown or corrupt Content-Encoding. */
  | 'bad_encoding'
  | 'network';

export class FetchError extends Error {
  constructor(
    readonly kind: FetchErrorKind,
    message: string,
    readonly url: string,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

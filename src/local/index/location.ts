/**
 * Where an index lives: a local directory, or a prefix on S3-compatible object storage
 * (`s3://bucket/prefix`), which LanceDB reads and writes directly. Settings for the store come from
 * the standard AWS environment variables only (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_ALLOW_HTTP), so no secret is ever in a config file or a log line.
 */

export type IndexLocation = { kind: 'directory'; path: string } | { kind: 'object-store'; uri: string; bucket: string; prefix: string };

export class IndexLocationError extends Error {}

const URI_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

export function parseIndexLocation(text: string): IndexLocation {
  const scheme = URI_SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'file') return { kind: 'directory', path: scheme === 'file' ? text.slice('file://'.length) : text };
  if (scheme !== 's3') throw new IndexLocationError(`index location ${text}: only local directories and s3:// URIs are supported`);
  const rest = text.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const prefix = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new IndexLocationError(`index location ${text}: "${bucket}" is not a valid bucket name`);
  if (prefix.includes('//')) throw new IndexLocationError(`index location ${text}: the prefix has an empty path segment`);
  return { kind: 'object-store', uri: `s3://${bucket}${prefix ? `/${prefix}` : ''}`, bucket, prefix };
}

export function isObjectStoreLocation(text: string): boolean {
  return parseIndexLocation(text).kind === 'object-store';
}

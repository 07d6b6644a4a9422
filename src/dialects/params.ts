/**
 * Reading a vendor's parameters, from the query string or a JSON body, against the JSON Schema a
 * route declares (the same schema documents the route in the OpenAPI document). The rules every
 * dialect shares (../shared/spec/dialects.md R5):
 * - `null` in an optional field means "not given" (clients send it);
 * - unknown fields are ignored;
 * - in a query string, booleans are true/false/True/False/1/0 (Python clients send `True`) and
 *   numbers are read from their digits.
 * A failure is a 400 that names the parameter, for the vendors whose errors do (Brave, Bing).
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { badRequest, type InvalidParameter } from '../api/errors.js';
import { createAjv, describeErrors } from '../api/validate.js';

type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'null';

interface PropertySchema {
  type?: JsonType | JsonType[];
  items?: PropertySchema;
}

export interface ParameterSchema {
  type: 'object';
  required?: readonly string[];
  properties: Readonly<Record<string, PropertySchema & Record<string, unknown>>>;
}

/** The schema of a parameter a dialect accepts so that clients sending it work, and then ignores. */
export const IGNORED_PARAMETER = { description: 'Accepted and ignored.' } as const;

/** Schemas for parameters accepted and ignored, by name, to spread into a schema's properties. */
export const ignoredParameters = (...names: string[]): Record<string, typeof IGNORED_PARAMETER> =>
  Object.fromEntries(names.map((name) => [name, IGNORED_PARAMETER]));

const ajv = createAjv();
const compiled = new WeakMap<object, ValidateFunction>();

function validatorOf(schema: ParameterSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

const typesOf = (property: PropertySchema | undefined): JsonType[] =>
  property?.type === undefined ? [] : Array.isArray(property.type) ? property.type : [property.type];

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };

/** A query-string value as the schema's type, when it reads as one; otherwise as it came (the validator then names it). */
function fromQueryString(raw: string | string[], property: PropertySchema | undefined): unknown {
  const types = typesOf(property);
  if (types.includes('array')) return (Array.isArray(raw) ? raw : [raw]).map((item) => fromQueryString(item, property?.items));
  const value = Array.isArray(raw) ? raw[0]! : raw;
  if (types.includes('boolean')) {
    const word = BOOLEAN_WORDS[value.toLowerCase()];
    if (word !== undefined) return word;
  }
  if ((types.includes('integer') || types.includes('number')) && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return value;
}

/** The object without its null fields, at every depth: null is "not given". */
function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null || item === undefined) continue;
    out[key] = item && typeof item === 'object' && !Array.isArray(item) ? withoutNulls(item as Record<string, unknown>) : item;
  }
  return out;
}

function check<T>(schema: ParameterSchema, data: Record<string, unknown>, location: InvalidParameter['location']): T {
  const validate = validatorOf(schema);
  if (validate(data)) return data as T;
  const errors = validate.errors ?? [];
  throw badRequest(describeErrors(errors, data), parameterOf(errors[0], data, location));
}

function parameterOf(error: ErrorObject | undefined, data: Record<string, unknown>, location: InvalidParameter['location']): InvalidParameter | undefined {
  if (!error) return undefined;
  if (error.keyword === 'required') return { parameter: String(error.params.missingProperty), location, problem: 'missing' };
  const parameter = error.instancePath.split('/')[1];
  return parameter ? { parameter, location, problem: 'invalid', value: data[parameter] } : undefined;
}

/** Query-string parameters read against `schema`: typed, nulls dropped, validated. */
export function readQuery<T>(schema: ParameterSchema, query: Record<string, string | string[] | undefined>): T {
  const data: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    data[name] = fromQueryString(raw, schema.properties[name]);
  }
  return check<T>(schema, data, 'query');
}

/** A JSON body read against `schema`: nulls dropped, validated. */
export function readBody<T>(schema: ParameterSchema, body: Record<string, unknown>): T {
  return check<T>(schema, withoutNulls(body), 'body');
}

/**
 * Parameters that may come from either place (Serper: the query string for LangChain, a JSON body
 * for litellm); the body wins where both have one.
 */
export function readQueryAndBody<T>(schema: ParameterSchema, query: Record<string, string | string[] | undefined>, body: Record<string, unknown>): T {
  const fromQuery: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) if (raw !== undefined) fromQuery[name] = fromQueryString(raw, schema.properties[name]);
  return check<T>(schema, { ...fromQuery, ...withoutNulls(body) }, 'body');
}

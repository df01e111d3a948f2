import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { BadRequestError, PayloadTooLargeError } from '#shared/errors';

/** The body limit of a form, unless its endpoint declares another (FormOptions.maxBytes). */
export const MAX_FORM_BYTES = 16 * 1024;

export interface FormOptions {
  /**
   * The endpoint's own body limit, for a form whose size grows with what the user owns (the device
   * choice: shared/pages/device-choice.ts); MAX_FORM_BYTES otherwise.
   */
  maxBytes?: number;
  /**
   * Leave out parameters sent with an empty value, as OAuth requires ("Parameters sent without a
   * value MUST be treated as if they were omitted from the request", RFC 6749 §3.1). HTML forms keep
   * them: a browser sends every field, and an empty one is a value the page shows back.
   */
  emptyAsOmitted?: boolean;
}

/**
 * Parses an application/x-www-form-urlencoded body. A body over the limit (`maxBytes`, else
 * MAX_FORM_BYTES) is refused (413) before it is read, a parameter sent twice is refused
 * (RFC 6749 §3.1, §3.2), as is any other media type.
 */
export function parseForm(event: APIGatewayProxyEventV2, options: FormOptions = {}): Record<string, string> {
  const raw = formText(event);
  const limit = options.maxBytes ?? MAX_FORM_BYTES;
  if (Buffer.byteLength(raw) > limit) throw new PayloadTooLargeError(limit);
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(event.headers['content-type'] ?? '')) {
    throw new BadRequestError('The request body must be form-encoded (Content-Type: application/x-www-form-urlencoded).');
  }
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    if (Object.hasOwn(form, name)) throw new BadRequestError(`Parameter '${name}' is repeated.`);
    form[name] = value;
  }
  return options.emptyAsOmitted ? withoutEmpty(form) : form;
}

/** The size in bytes of the request's body, as parseForm measures it (decoded from base64 when the gateway encoded it). */
export const formBytes = (event: APIGatewayProxyEventV2): number => Buffer.byteLength(formText(event));

const formText = (event: APIGatewayProxyEventV2): string =>
  (event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : event.body ?? '');

/** Throws invalid_request naming the first missing parameter. */
export function requireParams<K extends string>(form: Record<string, string>, names: readonly K[]): Record<K, string> {
  for (const name of names) {
    if (!form[name]) throw new BadRequestError(`Missing parameter '${name}'.`);
  }
  return form as Record<K, string>;
}

/** The parameters that have a value (RFC 6749 §3.1: one sent without a value is treated as omitted). */
export function withoutEmpty<T extends string | undefined>(params: Record<string, T>): Record<string, Exclude<T, undefined>> {
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined && value !== '')) as Record<string, Exclude<T, undefined>>;
}

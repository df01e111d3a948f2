import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { AppError } from '#shared/errors';
import { MAX_FORM_BYTES, parseForm, requireParams, withoutEmpty } from '#shared/http/form';

const FORM = 'application/x-www-form-urlencoded';

/** A POST event; `contentType` null sends no Content-Type header. */
function post(body: string | undefined, contentType: string | null = FORM, isBase64Encoded = false): APIGatewayProxyEventV2 {
  return { body, isBase64Encoded, headers: contentType === null ? {} : { 'content-type': contentType } } as unknown as APIGatewayProxyEventV2;
}

function refusal(call: () => unknown): { status: number; code: string; message: string } {
  try {
    call();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
  throw new Error('expected the call to be refused');
}

describe('parseForm', () => {
  it('decodes the parameters, + as a space and percent-escapes included', () => {
    expect(parseForm(post('grant_type=authorization_code&code=a%2Bb+c&redirect_uri=https%3A%2F%2Fapp.example%2Fcb')))
      .toEqual({ grant_type: 'authorization_code', code: 'a+b c', redirect_uri: 'https://app.example/cb' });
  });

  it('decodes a base64 body (as API Gateway may deliver it)', () => {
    expect(parseForm(post(Buffer.from('a=1&b=two').toString('base64'), FORM, true))).toEqual({ a: '1', b: 'two' });
  });

  it('reads no body as an empty form', () => {
    expect(parseForm(post(undefined))).toEqual({});
    expect(parseForm(post(undefined, FORM, true))).toEqual({});
  });

  it('accepts the media type with parameters and in any case, and refuses any other', () => {
    expect(parseForm(post('a=1', `${FORM}; charset=UTF-8`))).toEqual({ a: '1' });
    expect(parseForm(post('a=1', `${FORM} ;charset=utf-8`))).toEqual({ a: '1' });
    expect(parseForm(post('a=1', 'Application/X-WWW-Form-Urlencoded'))).toEqual({ a: '1' });
    for (const type of [null, '', 'application/json', `${FORM}x`, `x${FORM}`, `text/plain; x=${FORM}`, 'multipart/form-data']) {
      expect(refusal(() => parseForm(post('a=1', type)))).toMatchObject({ status: 400, code: 'invalid_request', message: expect.stringContaining('form-encoded') });
    }
  });

  it(`accepts a body of exactly ${MAX_FORM_BYTES} bytes and answers 413 for one byte more, counting UTF-8 bytes`, () => {
    const exact = `a=${'x'.repeat(MAX_FORM_BYTES - 2)}`;
    expect(parseForm(post(exact)).a).toHaveLength(MAX_FORM_BYTES - 2);
    expect(refusal(() => parseForm(post(`${exact}x`)))).toMatchObject({ status: 413 });
    // 'é' is two bytes: the same number of characters is over the limit.
    expect(refusal(() => parseForm(post(`a=${'é'.repeat((MAX_FORM_BYTES - 2) / 2)}x`)))).toMatchObject({ status: 413 });
    expect(refusal(() => parseForm(post(Buffer.from(`${exact}x`).toString('base64'), FORM, true)))).toMatchObject({ status: 413 });
  });

  it('checks the size before the media type', () => {
    expect(refusal(() => parseForm(post('x'.repeat(MAX_FORM_BYTES + 1), 'text/plain')))).toMatchObject({ status: 413 });
  });

  it('refuses a parameter sent twice, even with an empty value, naming it', () => {
    expect(refusal(() => parseForm(post('scope=a&scope=b')))).toEqual({ status: 400, code: 'invalid_request', message: "Parameter 'scope' is repeated." });
    expect(refusal(() => parseForm(post('state=&state=x', FORM), { emptyAsOmitted: true }))).toMatchObject({ status: 400 });
  });

  it('treats a name of the object prototype as an ordinary parameter', () => {
    expect(parseForm(post('constructor=1&toString=2'))).toEqual({ constructor: '1', toString: '2' });
  });

  it('keeps empty values for HTML forms and drops them when asked (RFC 6749 §3.1)', () => {
    expect(parseForm(post('name=&scope=read'))).toEqual({ name: '', scope: 'read' });
    expect(parseForm(post('code_verifier=&scope=read'), { emptyAsOmitted: true })).toEqual({ scope: 'read' });
  });
});

describe('requireParams', () => {
  it('returns the form when every named parameter has a value', () => {
    const form = { a: '1', b: '2', c: '' };
    expect(requireParams(form, ['a', 'b'])).toBe(form);
  });

  it('refuses naming the first parameter that is missing or empty', () => {
    expect(refusal(() => requireParams({ b: '2' }, ['a', 'b']))).toEqual({ status: 400, code: 'invalid_request', message: "Missing parameter 'a'." });
    expect(refusal(() => requireParams({ a: '1', b: '' }, ['a', 'b', 'c']))).toMatchObject({ message: "Missing parameter 'b'." });
  });
});

describe('withoutEmpty', () => {
  it('keeps the parameters that have a value, however short or blank-looking', () => {
    expect(withoutEmpty({ a: '', b: undefined, c: '0', d: ' ' })).toEqual({ c: '0', d: ' ' });
  });
});

/**
 * An input a domain rule refuses. Domain code knows nothing of HTTP: the http layer answers it as
 * 400 `invalid_request` with this message, which is written for the client and names the member.
 */
export class ValidationError extends Error {
  override name = 'ValidationError';
}

import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { LinkPurpose } from '#shared/data/link-repo';
import type { HttpMethod } from '#shared/routes';

// A declaration's sample (declaration.ts `sample`): the event `npm run invoke` sends, the status it
// answers, and the kit samples are made of against the running local service.

/** The input of a function an EventBridge schedule or an event source invokes (a stream or queue batch, `{"mode":"report"}`). */
export type ScheduledInput = Record<string, unknown>;

/** A sample event for the function, as `npm run invoke` sends it. */
export interface Sample {
  event: APIGatewayProxyEventV2 | ScheduledInput;
  /** What the sample asks, in one line. */
  description: string;
}

/** A demo user of the running local service. */
export interface SampleUser {
  id: string;
  email: string;
  emailConfirmed: boolean;
  password: string;
  /** Ids of the user's devices. */
  devices: string[];
}

/** A request of a sample (SampleKit.page). */
export interface SampleRequest {
  /** The route template; default: the function's first route. */
  route?: { method: HttpMethod | 'ANY'; path: string };
  /** The request's method when the route is `ANY`. */
  method?: HttpMethod;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  cookies?: string[];
  headers?: Record<string, string>;
  /** A form-encoded body; it gets the sample's CSRF field, matching its CSRF cookie. */
  form?: Record<string, string>;
  json?: unknown;
}

/**
 * What samples are made of, against a running local service seeded with the demo data (the
 * implementation: local/sample-events.ts). Whatever a sample stores through it (a session, a link,
 * a scratch application) is removed after the call.
 */
export interface SampleKit {
  /** The demo user with a confirmed address, and the one without. */
  readonly confirmed: SampleUser;
  readonly unconfirmed: SampleUser;
  /** The demo application (its secret is the running example app's: a sample must not change it). */
  readonly demoClient: { clientId: string; clientSecret: string; redirectUri: string };
  /** The name of every scratch application, as the deletion form asks it to be typed. */
  readonly scratchAppName: string;
  /** A public webhook address (an IP literal: checked without DNS) that the samples never deliver to. */
  readonly webhookUrl: string;
  /** The PKCE code verifier of authorizeParams' challenge. */
  readonly codeVerifier: string;
  /** A resource-API request of the confirmed demo user (its first device as `{device_id}`), as the JWT authorizer passes it on. */
  api(description: string, json?: unknown): Sample;
  /** Any other request: a page, a form, or a public JSON endpoint. */
  page(description: string, request?: SampleRequest): Sample;
  /** A session of the user (default: the confirmed demo user), ended after the call; its cookie. */
  session(user?: SampleUser): Promise<string>;
  /** A live e-mailed link of the user, removed after the call if still unused; its token. */
  link(purpose: LinkPurpose, user: SampleUser): Promise<string>;
  /** An authenticator-app enrolment of the confirmed demo user waiting for its first code, removed after the call. */
  totpEnrolment(): Promise<void>;
  /** An application of the confirmed demo user, removed after the call; `webhook`: registered with one. Its client id. */
  scratchApp(options?: { webhook?: boolean }): Promise<string>;
  /** A delivered test event of a scratch application (removed with it); its webhook id. */
  scratchDelivery(clientId: string): Promise<string>;
  /** A scratch application registered as the console does, its secret waiting to be shown: its id and the cookie of the secret's key. */
  scratchAppWithSecretToShow(): Promise<{ clientId: string; cookie: string }>;
  /** The demo application's registration as its edit form shows it. */
  demoClientRegistration(): Promise<Record<string, string>>;
  /** An authorization request of the demo application (code flow with PKCE). */
  authorizeParams(): Record<string, string>;
  /** HTTP Basic credentials of the demo application (client_secret_basic). */
  demoClientBasic(): string;
  /** A DynamoDB stream event (as Lambda sends it): the confirmed demo user's first device renamed. */
  deviceRenameRecord(): ScheduledInput;
  /** An SQS event (as Lambda sends it) of one delivery-queue message. */
  queueMessage(message: Record<string, unknown>): ScheduledInput;
}

/** The function's sample, which `npm run invoke` sends and test/e2e/invoke.test.ts checks. */
export interface SampleSpec {
  /**
   * The status the handler answers the sample with, on a freshly seeded local service (a function
   * without an HTTP route: 200, its return value being the body).
   */
  status: number;
  /**
   * Builds the sample. It succeeds when that leaves the demo data as it was; where success would
   * not (a new password, the demo application's secret), it asks what the page refuses, or works
   * on a scratch application.
   */
  make(kit: SampleKit): Sample | Promise<Sample>;
}

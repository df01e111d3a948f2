import type { BenchOption } from '#shared/bench-floor';
import { bundledEndpointTable } from '#shared/config';
import type { TableOperation } from '#shared/data/table-access';
import type { Scope } from '#shared/domain/scopes';
import type { FunctionName, HttpMethod, Route, ThrottleClass } from '#shared/routes';
import type { SampleSpec } from '#shared/declaration-sample';

export type { Sample, SampleKit, SampleRequest, SampleSpec, SampleUser, ScheduledInput } from '#shared/declaration-sample';

/**
 * What a resource function answers on success, as its declaration gives it (`openApi`): plain JSON,
 * since it travels in the endpoint table compiled into the OpenAPI function's bundle. The errors
 * every scoped route shares (401, 403, 503; 400, 413 and 415 with a body; 404 with a device id)
 * are added by shared/api-docs/openapi.ts.
 */
export interface OpenApiOperation {
  summary: string;
  /** The success responses, by status. */
  success: Record<string, object>;
  /** The request body, when the operation takes one. */
  body?: object;
}

// One declaration per function, beside its handler: `functions/<area>/<name>.route.ts` next to
// `functions/<area>/<name>.ts`, `export default defineEndpoint({ … })`. The function's name is the
// file's base name and its entry the sibling handler. functions/registry.ts discovers the
// declarations on disk and derives everything else from them: the route table, the IAM grants
// (infra/function-grants.ts), the stack, the local gateway, the 405/404 fallbacks, the OpenAPI
// document, the CORS methods, the sample events of `npm run invoke`, the benchmark's list and, with
// `bench` (shared/bench-floor.ts), the benchmark's scenario of the function.
//
// A declaration is data and closures only: importing it must construct no AWS client and read no
// environment variable, since the stack, the local tools and the unit tests import every one.

/** A route as a declaration gives it: the function is the declaring file's. */
export type RouteSpec = Omit<Route, 'fn'>;

/** A route without scopes: open to anyone (the auth API's, and the resource API's public documents and avatars). */
export type OpenRouteSpec = RouteSpec & { scopes?: never };

/** A route of the resource API that needs an access token: its function must declare its OpenAPI operation. */
export interface ScopedResourceRoute extends RouteSpec {
  api: 'resource';
  scopes: readonly Scope[];
}

/**
 * A resource route, served bare and under /api identically: reads and device writes are throttled
 * apart (`resource-read`, `device-write`).
 */
export const resource = (method: HttpMethod, path: string, scope: Scope): [ScopedResourceRoute, ScopedResourceRoute] => {
  const route = (prefix: string): ScopedResourceRoute => ({
    api: 'resource', method, path: `${prefix}${path}`, scopes: [scope], throttle: method === 'GET' ? 'resource-read' : 'device-write',
  });
  return [route(''), route('/api')];
};

/** A route of the auth API (its pages, forms and OAuth endpoints). */
export const auth = (method: HttpMethod, path: string, throttle: ThrottleClass): OpenRouteSpec => ({ api: 'auth', method, path, throttle });

/**
 * What the handler uses of AWS, from which its role is derived (infra/function-grants.ts); the IAM
 * test (test/infra/iam-grants.test.ts) checks the result against the calls the function really makes.
 */
export interface FunctionNeeds {
  /**
   * The data operations the handler uses: the repository methods it calls, directly or through the
   * services of shared/ (the groups of functions/needs.ts). Each declares its own DynamoDB actions
   * next to its code (`*_REPO_OPERATIONS`).
   */
  table?: readonly TableOperation[];
  /**
   * Signing-key access, on the stack's tagged keys: 'sign' (kms:Sign, the token issuer), 'verify'
   * (kms:GetPublicKey, the JWKS) or 'rotate' (create, alias and schedule deletion: the rotation function).
   */
  signingKey?: 'sign' | 'verify' | 'rotate';
  /** Sends account e-mail (ses:SendEmail from the configured sender). */
  sendsMail?: boolean;
  /** The webhook delivery queue: 'send' (sqs:SendMessage) and/or 'retry' (sqs:ChangeMessageVisibility, a failed delivery's backoff). */
  webhookQueue?: readonly ('send' | 'retry')[];
  /** Turns device certificates INACTIVE (iot:UpdateCertificate on the account's certificates): a removed device can no longer connect. */
  deviceCertificates?: 'deactivate';
  /** The devices' shadows on AWS IoT Core: 'read' (iot:GetThingShadow) and/or 'write' (iot:UpdateThingShadow), on the things. */
  deviceShadow?: readonly ('read' | 'write')[];
}

/** How a function is bundled and deployed, beside what invokes it. */
export interface BundlingOptions {
  /** Runs only in the local service, never deployed (developer tools such as the outbox). */
  localOnly?: boolean;
  /**
   * Files of node_modules the handler reads at run time (not bundled code), copied into its
   * Lambda package at the same path, so that it resolves them as it does locally.
   */
  assets?: readonly string[];
  /**
   * Modules the handler imports only when it first needs them (too large for its bundle), each
   * bundled on its own with the same settings, beside the handler's bundle as `<module name>.mjs`
   * (e.g. shared/domain/password-strength.ts → password-strength.mjs).
   */
  lazyModules?: readonly string[];
}

/**
 * What invokes the function, exactly one of: HTTP routes, a schedule, an event source, or the
 * fallback of both APIs. Routes with scopes on the resource API come with the function's OpenAPI
 * operation (the document describes them); no other function has one.
 */
export type Trigger =
  | {
    /** Its HTTP routes, at least one of them (the first or the last) a resource route with scopes (`resource(…)`). */
    routes: readonly [ScopedResourceRoute, ...RouteSpec[]] | readonly [...RouteSpec[], ScopedResourceRoute];
    /** Its OpenAPI operation: what it answers on success, and the body it takes (shared/api-docs/openapi.ts). */
    openApi: OpenApiOperation;
    schedule?: never; eventSource?: never; fallback?: never;
  }
  | {
    /** Its HTTP routes (at least one), none with scopes. */
    routes: readonly OpenRouteSpec[];
    openApi?: never; schedule?: never; eventSource?: never; fallback?: never;
  }
  | {
    /** Has no HTTP route: an EventBridge rule invokes it on this schedule expression (and an operator by `aws lambda invoke`). */
    schedule: string;
    routes?: never; openApi?: never; eventSource?: never; fallback?: never;
  }
  | {
    /**
     * Has no HTTP route: an event source mapping invokes it with the records of the table's stream
     * or the messages of the webhook delivery queue (infra/constructs/webhooks.ts), or the device
     * presence topic rule of AWS IoT Core with one lifecycle event (infra/constructs/device-presence.ts),
     * or fleet provisioning's template with a device's request (infra/constructs/fleet-provisioning.ts),
     * or the device reports topic rule with one shadow documents message (infra/constructs/device-shadow.ts).
     */
    eventSource: EventSourceKind;
    routes?: never; openApi?: never; schedule?: never; fallback?: never;
  }
  | {
    /** Answers what no route matches, on both APIs: 405 with `Allow` on a known path, 404 elsewhere (fallbackRouteKeys). */
    fallback: true;
    routes?: never; openApi?: never; schedule?: never; eventSource?: never;
  };

/** What can invoke a function that has no HTTP route, beside a schedule. */
export type EventSourceKind = 'table-stream' | 'webhook-queue' | 'iot-presence' | 'iot-provisioning-hook' | 'iot-shadow';

/** A function's declaration (see the top of this file). */
export type EndpointDeclaration = BundlingOptions & Trigger & BenchOption & {
  /** What its handler uses of AWS: its IAM grants. `{}` for a function that uses nothing. */
  needs: FunctionNeeds;
  sample: SampleSpec;
  /**
   * The page changes how the account signs in (it adds, removes or replaces a credential or a second
   * factor, the e-mail address or the password): it runs only for a sign-in of the last
   * RECENT_SIGN_IN_SECONDS. The page middleware (shared/pages/page-handler.ts) sends an older one to
   * the sign-in form, which says why and comes back, before the handler runs; the flag is compiled
   * into the function's bundle (infra/bundling.ts functionDefine). Only on a
   * `session: 'required'` page of the auth API; test/unit/layout.test.ts requires it of every
   * function whose repository operations write a credential (`credential` of shared/data/table-access.ts).
   */
  recentSignIn?: true;
};

/**
 * A function's declaration, checked by the compiler: one trigger (routes, a schedule, an event
 * source or the fallback), its AWS needs, its sample, and its OpenAPI operation when it has a
 * resource route with scopes. functions/registry.ts checks the same at run time, and more (a
 * unique name, a sibling handler, well-formed routes, no OpenAPI operation without a scoped route).
 */
export function defineEndpoint(declaration: EndpointDeclaration): EndpointDeclaration {
  return declaration;
}

/**
 * The serialisable part of the endpoint table: what the functions that answer from the table (the
 * 405/404 fallback, the OpenAPI document) need at run time. functions/registry.ts makes it
 * (endpointTable); bundles carry it compiled in, local processes get it from the registry.
 */
export interface EndpointTable {
  /** Every route, local-only ones included. */
  routes: readonly Route[];
  /** The OpenAPI operation of each function that declares one. */
  operations: Readonly<Record<FunctionName, OpenApiOperation>>;
}

let table: EndpointTable | undefined;

/** The endpoint table this function was bundled with (locally: the registry's), parsed once. */
export function bundledTable(): EndpointTable {
  table ??= JSON.parse(bundledEndpointTable()) as EndpointTable;
  return table;
}

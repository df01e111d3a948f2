import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one structured (JSON) logger. Callers log facts, never request bodies, headers, tokens,
 * codes, secrets or passwords.
 */
export const logger = new Logger({ serviceName: 'device-user-service' });

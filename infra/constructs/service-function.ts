import { posix, resolve } from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BUNDLING, functionDefine, lazyModuleEsbuildArgs, lazyModuleFile } from '#infra/bundling';
import type { TableAction } from '#shared/data/table-access';
import { TABLE_SCHEMA } from '#shared/data/table-schema';

export interface ServiceFunctionProps {
  /** Handler file relative to the repository root. */
  entry: string;
  environment: Record<string, string>;
  memorySize?: number;
  /** Seconds; default 10. */
  timeoutSeconds?: number;
  /** Files of node_modules the handler reads at run time, copied into its package (FunctionDef.assets). */
  assets?: readonly string[];
  /** Modules imported on first use, bundled on their own beside the handler (FunctionDef.lazyModules). */
  lazyModules?: readonly string[];
  /** AWS X-Ray active tracing (off unless asked: each trace is billed). */
  tracing?: boolean;
  /** Its pages ask for a recent sign-in (FunctionDef.recentSignIn): compiled into its bundle. */
  recentSignIn?: boolean;
}

const ROOT = resolve(import.meta.dirname, '../..');

const shellQuote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * After esbuild, copies each asset from the project's node_modules into the package at the same
 * path (node_modules/<package>/<file>), where the handler's `require.resolve` finds it in Lambda;
 * and bundles each lazily imported module beside the handler's bundle, with the same settings.
 */
function afterBundling(assets: readonly string[], lazyModules: readonly string[]): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      ...assets.map((asset) => {
        const target = `${outputDir}/node_modules/${asset}`;
        return `mkdir -p "${posix.dirname(target)}" && cp "${inputDir}/node_modules/${asset}" "${target}"`;
      }),
      ...lazyModules.map((entry) => [`${inputDir}/node_modules/.bin/esbuild`, '--bundle', `${inputDir}/${entry}`, ...lazyModuleEsbuildArgs(`${outputDir}/${lazyModuleFile(entry)}`)]
        .map(shellQuote).join(' ')),
    ],
  };
}

/**
 * A function with every default of the service: Node 24 on arm64, ESM bundle, its own log group,
 * and its own role that may write only to that log group (no managed policy).
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grantWrite(role);
    super(scope, id, {
      role,
      entry: resolve(ROOT, props.entry),
      handler: 'handler',
      projectRoot: ROOT,
      depsLockFilePath: resolve(ROOT, 'package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: Duration.seconds(props.timeoutSeconds ?? 10),
      environment: props.environment,
      bundling: {
        ...BUNDLING, define: { ...BUNDLING.define, ...functionDefine(props.recentSignIn === true) },
        ...(props.assets?.length || props.lazyModules?.length ? { commandHooks: afterBundling(props.assets ?? [], props.lazyModules ?? []) } : {}),
      },
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      ...(props.tracing ? { tracing: Tracing.ACTIVE } : {}),
    });
    if (props.tracing) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray has no resource-level permissions: xray:PutTraceSegments and xray:PutTelemetryRecords need Resource "*" (Lambda active tracing).',
      });
    }
  }

  /** Grants exactly these DynamoDB actions on the table, and Query on GSI1 when asked. */
  bindTable(table: ITableV2, actions: readonly TableAction[], index = false) {
    if (actions.length > 0) {
      this.addToRolePolicy(new PolicyStatement({
        actions: actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn],
      }));
    }
    if (index) {
      this.addToRolePolicy(new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${table.tableArn}/index/${TABLE_SCHEMA.gsi1.name}`],
      }));
    }
  }
}

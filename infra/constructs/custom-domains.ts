import { CfnOutput, Stack } from 'aws-cdk-lib';
import { ApiMapping, DomainName, SecurityPolicy, type IHttpApi, type IHttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate, CertificateValidation, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { ARecord, HostedZone, RecordTarget, type IHostedZone } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayv2DomainProperties } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { pascal } from '#infra/constructs/construct-ids';
import type { CustomDomainSettings } from '#infra/settings';
import type { ApiName } from '#shared/routes';

/**
 * Both APIs on custom domains (`auth.<domain>`, `api.<domain>`): a regional API Gateway domain name
 * each (TLS 1.2), on the given ACM certificate or on one requested here and validated by DNS in the
 * hosted zone, and, with a zone, an alias record each. Their URLs are the issuer and the audience:
 * they stay the same whatever happens to the APIs behind them.
 */
export class CustomDomains extends Construct {
  /** `https://auth.<domain>`: the access tokens' issuer. */
  readonly authUrl: string;
  /** `https://api.<domain>`: the access tokens' audience. */
  readonly apiUrl: string;
  private readonly zone?: IHostedZone;
  private readonly certificate: ICertificate;

  constructor(scope: Construct, id: string, private readonly settings: CustomDomainSettings) {
    super(scope, id);
    this.authUrl = `https://${settings.authHost}`;
    this.apiUrl = `https://${settings.apiHost}`;
    if (settings.hostedZone) {
      this.zone = HostedZone.fromHostedZoneAttributes(this, 'Zone', { hostedZoneId: settings.hostedZone.id, zoneName: settings.hostedZone.name });
    }
    this.certificate = settings.certificateArn
      ? Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn)
      : new Certificate(this, 'Certificate', {
        domainName: settings.authHost,
        subjectAlternativeNames: [settings.apiHost],
        validation: CertificateValidation.fromDns(this.zone),
      });
  }

  /** Serves `stage` of `httpApi` at the root of its host, and points the host at it. */
  map(api: ApiName, httpApi: IHttpApi, stage: IHttpStage) {
    const host = api === 'auth' ? this.settings.authHost : this.settings.apiHost;
    const name = pascal(api);
    const domainName = new DomainName(this, `${name}DomainName`, {
      domainName: host,
      certificate: this.certificate,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new ApiMapping(this, `${name}Mapping`, { api: httpApi, domainName, stage });
    if (this.zone) {
      new ARecord(this, `${name}Record`, {
        zone: this.zone,
        recordName: host,
        target: RecordTarget.fromAlias(new ApiGatewayv2DomainProperties(domainName.regionalDomainName, domainName.regionalHostedZoneId)),
      });
    } else {
      new CfnOutput(Stack.of(this), api === 'auth' ? 'AuthDnsTarget' : 'ApiDnsTarget', {
        value: domainName.regionalDomainName,
        description: `Point ${host} here (CNAME, or a Route 53 alias)`,
      });
    }
  }
}

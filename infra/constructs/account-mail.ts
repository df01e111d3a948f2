import { Duration, Stack } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  CloudWatchDimensionSource, ConfigurationSet, EmailSendingEvent, EventDestination, SuppressionReasons,
} from 'aws-cdk-lib/aws-ses';
import { Construct } from 'constructs';

/** The SES auto-tag that names a message's configuration set: the dimension of its event metrics. */
const CONFIGURATION_SET_TAG = 'ses:configuration-set';

/**
 * The SES configuration set every account e-mail is sent with. Its CloudWatch event destination
 * publishes each message's send, delivery, bounce, complaint and reject as metrics (namespace
 * AWS/SES, dimension `ses:configuration-set`), which the dashboard shows and the bounce-rate alarm
 * watches. Its suppression options put an address that hard-bounced or complained on the account's
 * suppression list, and SES then drops further messages to it for this set: the service never
 * mails it again, and no request of ours pays a lookup for it.
 */
export class AccountMail extends Construct {
  readonly configurationSet: ConfigurationSet;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
      suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
    });
    this.configurationSet.addEventDestination('Metrics', {
      destination: EventDestination.cloudWatchDimensions([{
        name: CONFIGURATION_SET_TAG,
        source: CloudWatchDimensionSource.MESSAGE_TAG,
        defaultValue: this.configurationSet.configurationSetName,
      }]),
      events: [EmailSendingEvent.SEND, EmailSendingEvent.DELIVERY, EmailSendingEvent.BOUNCE, EmailSendingEvent.COMPLAINT, EmailSendingEvent.REJECT],
    });
  }

  get configurationSetName(): string {
    return this.configurationSet.configurationSetName;
  }

  /** The ARN ses:SendEmail checks when a message names this set. */
  get configurationSetArn(): string {
    const { partition, region, account } = Stack.of(this);
    return `arn:${partition}:ses:${region}:${account}:configuration-set/${this.configurationSetName}`;
  }

  /** An event count of this set: `Send`, `Delivery`, `Bounce`, `Complaint` or `Reject`. */
  metric(event: 'Send' | 'Delivery' | 'Bounce' | 'Complaint' | 'Reject', period = Duration.minutes(5)): Metric {
    return new Metric({
      namespace: 'AWS/SES', metricName: event, dimensionsMap: { [CONFIGURATION_SET_TAG]: this.configurationSetName }, statistic: 'Sum', period,
    });
  }
}

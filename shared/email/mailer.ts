/** One e-mail. Links in it are secrets: never log a message's body. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail: Amazon SES in AWS, a folder (the outbox) locally. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

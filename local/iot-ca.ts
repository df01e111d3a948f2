// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API first.
import 'reflect-metadata';
import { createHash, randomBytes, webcrypto, KeyObject } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// The local stand-in for the CA of AWS IoT Core's device certificates: a certificate authority made
// on the spot, which issues each device a certificate whose subject names its thing (the device id),
// as CreateKeysAndCertificate does once the certificate is attached to the thing. ECDSA P-256, which
// IoT Core accepts for device certificates.

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** A local certificate authority: its certificate (PEM), and what signs with its key. */
export interface LocalCa {
  certPem: string;
  /** A device's certificate, its subject the thing name. */
  issue(thingName: string): Promise<DeviceCredentials>;
  /** The broker's own certificate, for 127.0.0.1 (clients check the server's name). */
  issueServer(): Promise<{ certPem: string; keyPem: string }>;
}

/** A device's certificate and private key (PEM), as an operator hands them to the device, and its id. */
export interface DeviceCredentials {
  thingName: string;
  certPem: string;
  keyPem: string;
  /** The certificate's id as IoT Core names one: the SHA-256 of its DER, in hex (a lifecycle event's principalIdentifier). */
  certificateId: string;
}

/** A new CA, valid for a day (the local broker's lifetime): a broker and its devices' certificates come from the same one. */
export async function createLocalCa(): Promise<LocalCa> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomBytes(8).toString('hex'), name: 'CN=Device and User Service local IoT CA', keys, signingAlgorithm: ALGORITHM,
    notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000),
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)],
  });
  const signed = async (subject: string, usage: x509.ExtendedKeyUsage, ...more: x509.Extension[]) => {
    const leafKeys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomBytes(8).toString('hex'), subject, issuer: ca.subject,
      notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000),
      publicKey: leafKeys.publicKey, signingKey: keys.privateKey, signingAlgorithm: ALGORITHM,
      extensions: [new x509.BasicConstraintsExtension(false, undefined, true), new x509.ExtendedKeyUsageExtension([usage]), ...more],
    });
    return { cert, keyPem: KeyObject.from(leafKeys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string };
  };
  return {
    certPem: ca.toString('pem'),
    async issue(thingName) {
      const { cert, keyPem } = await signed(`CN=${thingName}`, x509.ExtendedKeyUsage.clientAuth);
      return { thingName, certPem: cert.toString('pem'), keyPem, certificateId: createHash('sha256').update(Buffer.from(cert.rawData)).digest('hex') };
    },
    async issueServer() {
      const { cert, keyPem } = await signed('CN=127.0.0.1', x509.ExtendedKeyUsage.serverAuth, new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }]));
      return { certPem: cert.toString('pem'), keyPem };
    },
  };
}

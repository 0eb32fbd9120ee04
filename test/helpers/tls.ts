// A throw-away certificate authority made at test time in Node (@peculiar/x509
// on WebCrypto), and a server certificate it signs for 127.0.0.1 and
// localhost: what a company CA that inspects TLS looks like to the CLI.
// Nothing is installed anywhere; the CA is trusted only by pointing
// NODE_EXTRA_CA_CERTS at its file.
import { webcrypto } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// @peculiar/x509 resolves its parts through tsyringe, which needs the Reflect metadata API first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

export interface TestCa {
  /** The CA's certificate (PEM file), for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** A server certificate and key signed by the CA, valid for 127.0.0.1 and localhost. */
  cert: string;
  key: string;
}

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
/** EC keys: quick to make. */
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(12))).toString('hex').replace(/^[89a-f]/, '1');
}

async function pemKey(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/** Makes a CA and a server certificate, and writes the CA's certificate to `dir`/ca.pem. */
export async function makeTestCa(dir: string, name = 'aerial throw-away test CA'): Promise<TestCa> {
  mkdirSync(dir, { recursive: true });
  const notBefore = new Date(Date.now() - DAY);
  const notAfter = new Date(Date.now() + 2 * DAY);
  const caKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}`,
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const serverKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const serverCert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=127.0.0.1',
    issuer: caCert.subject,
    notBefore,
    notAfter,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'dns', value: 'localhost' },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, caCert.toString('pem'));
  return { caFile, cert: serverCert.toString('pem'), key: await pemKey(serverKeys.privateKey) };
}

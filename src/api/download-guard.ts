// Where an image download may go. Its URL comes from the service (a list
// record's url, a webhook's signedUrl), so a hostile or compromised service
// could point the CLI at the machine's own cloud metadata service, which
// hands out credentials to whoever asks from inside. Downloads go only to
// http(s) URLs, never to link-local or metadata addresses: refused by the URL
// before anything is sent, and by the address a name resolves to when the
// socket connects (so a name cannot answer one address to a check and
// another to the connection).
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { BadResponseError } from './errors.js';

const FORBIDDEN = new BlockList();
// Link-local: 169.254.169.254 is the metadata service of AWS, GCP, Azure, Oracle and others, 169.254.170.2 ECS's.
FORBIDDEN.addSubnet('169.254.0.0', 16, 'ipv4');
FORBIDDEN.addSubnet('fe80::', 10, 'ipv6');
// Metadata services outside link-local: AWS over IPv6, Alibaba Cloud.
FORBIDDEN.addAddress('fd00:ec2::254', 'ipv6');
FORBIDDEN.addAddress('100.100.100.200', 'ipv4');

/** Names of metadata services (some resolve only inside their cloud, where they matter). */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'metadata.tencentyun.com']);

/** True for a link-local or cloud metadata address (IPv4-mapped IPv6 included). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && FORBIDDEN.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** A refused destination: like any answer of the service the client will not follow. */
export class ForbiddenDestinationError extends BadResponseError {
  constructor(what: string, doing = 'download from') {
    super(`refused to ${doing} ${what}: a link-local or cloud metadata address`, 'ForbiddenDestination');
  }
}

/** Refuses a download URL's host when it names a metadata service or a forbidden address; names are checked again as they resolve. */
export function checkDownloadHost(hostname: string): void {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (METADATA_NAMES.has(host) || isForbiddenAddress(host)) throw new ForbiddenDestinationError(host);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * A lookup for sockets (undici's `connect.lookup`) that resolves through
 * `resolve` and fails the connection with ForbiddenDestinationError when a
 * name resolves to a forbidden address. IP literals never reach a lookup;
 * checkDownloadHost covers them.
 */
/** The system's resolver, node:dns, loaded for the first name looked up: a service reached by its IP address never needs it. */
let systemResolver: Promise<Lookup> | undefined;
const systemLookup: Lookup = (hostname, options, callback) => {
  systemResolver ??= import('node:dns').then((dns) => dns.lookup as unknown as Lookup);
  systemResolver.then(
    (lookup) => lookup(hostname, options, callback),
    (error: NodeJS.ErrnoException) => callback(error, [], undefined),
  );
};

export function guardLookup(resolve: Lookup = systemLookup): Lookup {
  return (hostname, options, callback) => {
    resolve(hostname, options, (error, address, family) => {
      if (error) return callback(error, address, family);
      const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
      const forbidden = addresses.find(isForbiddenAddress);
      if (forbidden !== undefined) return callback(new ForbiddenDestinationError(`${hostname} (${forbidden})`, 'connect to') as unknown as NodeJS.ErrnoException, address, family);
      callback(null, address, family);
    });
  };
}

export const guardedLookup = guardLookup();

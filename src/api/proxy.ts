// Proxies from the environment, as curl, gh and undici read them: HTTPS_PROXY
// for https URLs (HTTP_PROXY when it is not set), HTTP_PROXY for http URLs,
// NO_PROXY for hosts reached directly; each lower-case form wins over its
// upper-case one. Checked before anything is sent, and only ever shown with
// the password masked.
import { InvalidInputError } from './errors.js';

export interface ProxyEndpoint {
  /** The variable it came from, as set (https_proxy or HTTPS_PROXY, …). */
  variable: string;
  url: URL;
}

export interface ProxySettings {
  http?: ProxyEndpoint;
  https?: ProxyEndpoint;
  /** NO_PROXY's value as set: comma- or space-separated hosts, `.domain`, `host:port`, or `*`. */
  noProxy?: { variable: string; value: string };
}

/** The lower-case form first, then the upper-case one; an empty value counts as unset. */
function lookup(env: Record<string, string | undefined>, name: string): { variable: string; value: string } | undefined {
  for (const variable of [name.toLowerCase(), name]) {
    const value = env[variable]?.trim();
    if (value) return { variable, value };
  }
  return undefined;
}

/** A value with whatever sits between `//` and `@` masked, for error messages about values that did not parse. */
function maskedRaw(value: string): string {
  return value.replace(/\/\/[^/@]*@/, '//***@');
}

function parseProxy(variable: string, value: string): ProxyEndpoint {
  // `proxy.example.com:3128` without a scheme means http, as curl takes it.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new InvalidInputError(`${variable} must be an http:// or https:// proxy URL such as http://proxy.example.com:3128; got '${maskedRaw(value)}'`);
  }
  return { variable, url };
}

/** The proxies the environment asks for; undefined when it sets none (every request goes direct). */
export function readProxySettings(env: Record<string, string | undefined>): ProxySettings | undefined {
  const http = lookup(env, 'HTTP_PROXY');
  const https = lookup(env, 'HTTPS_PROXY');
  if (!http && !https) return undefined;
  return {
    http: http && parseProxy(http.variable, http.value),
    https: https && parseProxy(https.variable, https.value),
    noProxy: lookup(env, 'NO_PROXY'),
  };
}

/** A proxy URL fit to print: the password (and only it) replaced by ***. */
export function maskProxy(url: URL): string {
  const user = url.username ? `${url.username}${url.password ? ':***' : ''}@` : '';
  return `${url.protocol}//${user}${url.host}`;
}

/** The proxy a request to a URL of this protocol goes through when NO_PROXY does not exempt its host. */
export function proxyFor(settings: ProxySettings | undefined, protocol: string): ProxyEndpoint | undefined {
  return protocol === 'https:' ? (settings?.https ?? settings?.http) : settings?.http;
}

/** What --verbose says about proxies, once per command. */
export function describeProxies(settings: ProxySettings): string {
  const https = proxyFor(settings, 'https:');
  const http = proxyFor(settings, 'http:');
  const name = (endpoint: ProxyEndpoint) => `${maskProxy(endpoint.url)} (${endpoint.variable})`;
  const routes =
    https && http && https === http
      ? [`https and http requests go through ${name(https)}`]
      : [https ? `https requests go through ${name(https)}` : 'https requests go direct', http ? `http requests through ${name(http)}` : 'http requests direct'];
  const except = settings.noProxy ? `; direct to ${settings.noProxy.variable}=${settings.noProxy.value}` : '';
  return `proxy: ${routes.join(', ')}${except}`;
}

/** The proxy passwords as they may appear anywhere: raw (percent-encoded) and decoded. */
export function proxySecrets(settings: ProxySettings | undefined): string[] {
  const secrets = new Set<string>();
  for (const endpoint of [settings?.http, settings?.https]) {
    if (!endpoint?.url.password) continue;
    secrets.add(endpoint.url.password);
    try {
      secrets.add(decodeURIComponent(endpoint.url.password));
    } catch {
      // Not valid percent-encoding: the raw form is all there is.
    }
  }
  return [...secrets];
}

// Bundled in place of node:http for undici, which takes two things from it
// as it loads: http.maxHeaderSize, the default limit of response headers for
// a Client given none, and IncomingMessage, to tell a request body that is an
// incoming message. aerial's client gives every dispatcher its own limit
// (src/api/dispatcher.ts), and sends no incoming message as a body; loading
// node:http (its agent, client, server and parser modules) costs every
// command that talks to the service a few milliseconds. The stand-ins are
// Node's default limit (which the sandbox's webhook sender takes) and a class
// nothing is an instance of; anything else is node:http's, loaded when first
// asked for. A test compares them with node:http.
'use strict';
class IncomingMessageNeverSent {}
module.exports = new Proxy(
  { maxHeaderSize: 16 * 1024, IncomingMessage: IncomingMessageNeverSent },
  { get: (standIns, name) => (name in standIns ? standIns[name] : require('node:http')[name]) },
);

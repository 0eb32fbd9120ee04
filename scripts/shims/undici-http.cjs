// Bundled in place of node:http for undici, which takes two things from it
// as it loads: http.maxHeaderSize, the default limit of response headers for
// a client given none, and IncomingMessage, to tell a request body that is an
// incoming message (aerial sends none). Loading node:http (its agent, client,
// server and parser modules) costs every command that talks to the service a
// few milliseconds. The stand-ins: Node's own limit, which is its default
// unless --max-http-header-size is given (on the command line or in
// NODE_OPTIONS; node:http is loaded to read it only then), and a class nothing
// is an instance of. Anything else is node:http's, loaded when first asked
// for. A test compares them with node:http.
'use strict';
const NODE_DEFAULT_MAX_HEADER_SIZE = 16 * 1024;
const HEADER_SIZE_FLAG = /^--max[-_]http[-_]header[-_]size\b/;

let maxHeaderSize;
function nodeMaxHeaderSize() {
  if (maxHeaderSize === undefined) {
    const options = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
    maxHeaderSize = options.some((option) => HEADER_SIZE_FLAG.test(option)) ? require('node:http').maxHeaderSize : NODE_DEFAULT_MAX_HEADER_SIZE;
  }
  return maxHeaderSize;
}

class IncomingMessageNeverSent {}
const standIns = {
  get maxHeaderSize() {
    return nodeMaxHeaderSize();
  },
  IncomingMessage: IncomingMessageNeverSent,
};
module.exports = new Proxy(standIns, { get: (target, name) => (name in target ? target[name] : require('node:http')[name]) });

// Bundled in place of node:http2 for undici. undici reads a few protocol
// constants from it at load time and calls connect() only for HTTP/2 origins
// (allowH2), which aerial never enables; loading node:http2 (and node:tls with
// it) eagerly costs about 15 ms of every command that talks to the service.
// The values are fixed by RFC 9113 and nghttp2; a test compares them with node:http2.
'use strict';
module.exports = {
  constants: {
    HTTP2_HEADER_AUTHORITY: ':authority',
    HTTP2_HEADER_METHOD: ':method',
    HTTP2_HEADER_PATH: ':path',
    HTTP2_HEADER_SCHEME: ':scheme',
    HTTP2_HEADER_CONTENT_LENGTH: 'content-length',
    HTTP2_HEADER_EXPECT: 'expect',
    HTTP2_HEADER_STATUS: ':status',
    HTTP2_HEADER_PROTOCOL: ':protocol',
    NGHTTP2_REFUSED_STREAM: 7,
    NGHTTP2_CANCEL: 8,
  },
  connect(...args) {
    return require('node:http2').connect(...args);
  },
};

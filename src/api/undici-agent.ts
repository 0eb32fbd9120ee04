// undici's index eagerly loads fetch, WebSocket, caches, mocks and proxies:
// about 40 ms of startup this CLI never uses. The client needs only the Agent
// (pooled keep-alive connections) and the request API mixed into dispatchers,
// which is exactly what undici's own index does with these modules.
import { setFlagsFromString } from 'node:v8';
import type { Agent as AgentType } from 'undici';
// @ts-expect-error undici ships no type declarations for its internal modules
import AgentImpl from 'undici/lib/dispatcher/agent.js';
// @ts-expect-error see above
import DispatcherImpl from 'undici/lib/dispatcher/dispatcher.js';
// @ts-expect-error see above
import api from 'undici/lib/api/index.js';

Object.assign((DispatcherImpl as { prototype: object }).prototype, api);

// undici parses HTTP in WebAssembly, compiled at the first connection. V8's optimising
// tier-up of that module costs more than a whole CLI run here (and holds up exit),
// while its baseline compiler is plenty fast for the responses a CLI reads.
setFlagsFromString('--liftoff-only');

export const Agent = AgentImpl as typeof AgentType;
export type Agent = AgentType;

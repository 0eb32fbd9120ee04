// undici's index eagerly loads fetch, WebSocket, caches, mocks and proxies:
// about 40 ms of startup this CLI never uses. The client needs only the Agent
// (pooled keep-alive connections) and the request API mixed into dispatchers,
// which is exactly what undici's own index does with these modules.
import type { Agent as AgentType } from 'undici';
// @ts-expect-error undici ships no type declarations for its internal modules
import AgentImpl from 'undici/lib/dispatcher/agent.js';
// @ts-expect-error see above
import DispatcherImpl from 'undici/lib/dispatcher/dispatcher.js';
// @ts-expect-error see above
import api from 'undici/lib/api/index.js';

Object.assign((DispatcherImpl as { prototype: object }).prototype, api);

export const Agent = AgentImpl as typeof AgentType;
export type Agent = AgentType;

import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{Faults,MAX_LATENCY_MS,NO_FAULTS,RateLimiter,seededRandom,sleep}from"./chunk-3FOJDN6A.js";import"./chunk-DQ7MFXUG.js";export{Faults,MAX_LATENCY_MS,NO_FAULTS,RateLimiter,seededRandom,sleep};

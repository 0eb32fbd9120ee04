import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{PagingError,WALK_LIMITS,pageContradiction,walkPages}from"./chunk-434SIR3O.js";import"./chunk-2YWCJWIX.js";import"./chunk-DQ7MFXUG.js";export{PagingError,WALK_LIMITS,pageContradiction,walkPages};

import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{VERSION}from"./chunk-VLHDTOWU.js";import"./chunk-DQ7MFXUG.js";export{VERSION};

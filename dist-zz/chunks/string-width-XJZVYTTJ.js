import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{stringWidth}from"./chunk-ZKTU54LT.js";import"./chunk-DQ7MFXUG.js";export{stringWidth as default};

import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{__commonJS,__require}from"./chunk-DQ7MFXUG.js";var require_promises=__commonJS({"node-builtin:node:fs/promises"(exports,module){module.exports=__require("node:fs/promises")}});export{require_promises};

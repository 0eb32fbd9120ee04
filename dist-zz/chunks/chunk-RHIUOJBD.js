import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{__commonJS,__require}from"./chunk-DQ7MFXUG.js";var require_node_os=__commonJS({"node-builtin:node:os"(exports,module){module.exports=__require("node:os")}});export{require_node_os};

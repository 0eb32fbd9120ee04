import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{__commonJS,__require}from"./chunk-DQ7MFXUG.js";var require_node_tty=__commonJS({"node-builtin:node:tty"(exports,module){module.exports=__require("node:tty")}});export{require_node_tty};

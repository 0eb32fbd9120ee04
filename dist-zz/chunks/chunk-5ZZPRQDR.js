import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{__commonJS,__require}from"./chunk-DQ7MFXUG.js";var require_node_stream=__commonJS({"node-builtin:node:stream"(exports,module){module.exports=__require("node:stream")}});export{require_node_stream};

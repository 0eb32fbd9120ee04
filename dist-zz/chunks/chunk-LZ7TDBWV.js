import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{__commonJS,__require}from"./chunk-DQ7MFXUG.js";var require_node_worker_threads=__commonJS({"node-builtin:node:worker_threads"(exports,module){module.exports=__require("node:worker_threads")}});export{require_node_worker_threads};

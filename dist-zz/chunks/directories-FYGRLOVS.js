import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{makeDirectories}from"./chunk-IWFDIZG6.js";import"./chunk-VYBMJT4I.js";import"./chunk-FQHQSVRZ.js";import"./chunk-DQ7MFXUG.js";export{makeDirectories};

import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{Redactor,redactValue,secretForms}from"./chunk-CXH272RJ.js";import"./chunk-DQ7MFXUG.js";export{Redactor,redactValue,secretForms};

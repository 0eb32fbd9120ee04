import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{describeDurationRange,formatDuration,parseDuration,readDuration}from"./chunk-ORGU5PRT.js";import"./chunk-MESVNSZ7.js";import"./chunk-2YWCJWIX.js";import"./chunk-DQ7MFXUG.js";export{describeDurationRange,formatDuration,parseDuration,readDuration};

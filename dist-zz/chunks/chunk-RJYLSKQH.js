import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
function formatBytes(bytes){if(bytes<1024)return`${bytes} B`;if(bytes<1048576)return`${Math.round(bytes/1024)} KiB`;let mib=bytes/1048576;return`${Number.isInteger(mib)?mib:mib.toFixed(1)} MiB`}export{formatBytes};

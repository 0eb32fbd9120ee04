import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
var API_ROOT="/api/external/v1",API_PATH=`${API_ROOT}/image-generation`,URL_LIFETIME_MS=7200*1e3,DEFAULT_BASE_URL="https://api.genaerial.com",SORT_PROPERTIES=["createdAt"];export{API_ROOT,API_PATH,URL_LIFETIME_MS,DEFAULT_BASE_URL,SORT_PROPERTIES};

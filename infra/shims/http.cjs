// Stands in for `http` / `node:http` in every bundle (the alias in infra/bundling.ts). The
// module's ESM facade reads every export once, which evaluates its lazy getters (WebSocket,
// CloseEvent, MessageEvent) and so loads undici: tens of milliseconds of each cold start. The
// CommonJS object, taken as it is, defers those getters until something reads them.
// process.getBuiltinModule (not require) so that the alias cannot send this file back to itself.
module.exports = process.getBuiltinModule('node:http');

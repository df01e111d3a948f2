// Stands in for `https` / `node:https` in every bundle (the alias in infra/bundling.ts), for the
// same reason as http.cjs: the CommonJS object, not the ESM facade that reads every export.
module.exports = process.getBuiltinModule('node:https');

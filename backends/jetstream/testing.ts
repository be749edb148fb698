// The jetstream backend's test face: what its tests check without a server of every version, so
// that nothing outside this folder imports its rooms. Not exported by mod.ts nor published as an
// entry: it changes with the backend. (Tests age delete markers through `JetStreamDeps.now`.)

export { checkServerVersion } from "./bind.ts";

// The jetstream backend's test face: what its tests check without a server of every version, and
// the direct gets and purges they compare with the client's API, so that nothing outside this folder imports
// its rooms. Not exported by mod.ts nor published as an entry: it changes with the backend.
// (Tests age delete markers through `JetStreamDeps.now`.)

export { checkServerVersion } from "./bind.ts";
export { ASK_AGAIN, directGets, streamInfo } from "./direct.ts";
export { getMessage, lookMessage, type MessageSource } from "./messages.ts";
export { type HeaderView, headerView, rawHeaders } from "./header_view.ts";
export { purge } from "./write.ts";
export { repliesOf } from "./replies.ts";
export { apiCode } from "./errors.ts";

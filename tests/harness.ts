// The test harness's face, for the benchmark (bench/) and the fault runs: the one spawner, how a
// Deno child starts, a private nats-server, the outside tools a run needs, the seeded PRNG, and
// the tests' deterministic embedder.
// Tests import tests/_lib/ directly; nothing outside tests/ does.

export { ROOT_CONFIG } from "./_lib/deno_child.ts";
export { TestEmbedder } from "./_lib/embedder.ts";
export { natsConnect, startNatsServer } from "./_lib/nats_server.ts";
export { requireTools } from "./_lib/needs.ts";
export { mulberry32, Rng } from "./_lib/rng.ts";
export { spawnDeno } from "./_lib/spawn.ts";

// Which nats-server binary runs a given version (see tests/_lib/binaries.ts).

export { nats210Path, serverBinary } from "../_lib/binaries.ts";

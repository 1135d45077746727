/**
 * @tay/client: a Tay store served by another process (`tay serve`, or an
 * application's `Server.serve`), through the same promise interface as
 * the embedded engine's promise face (`EnginePromises`): code moves
 * between embedded and client mode by changing how it opens. No native
 * addon of its own; Node's `http` over a Unix socket or TCP.
 *
 * - `Client`: `connect(directory | url)`, the commands, the reads
 *   (promises here), subscriptions, heartbeats;
 * - `Wire`, `Shape`: the protocol's JSON shapes and their checks
 *   (docs/protocol.md), shared with the server;
 * - `Locate`: where a store's server listens.
 */
export * as Shape from "./Shape.js";
export * as Wire from "./Wire.js";
export * as Locate from "./Locate.js";
export type { Json, JsonObject } from "./Wire.js";
export * as Client from "./Client.js";
export * as JobEnds from "./JobEnds.js";
export * as Transport from "./Transport.js";
export { connect } from "./Client.js";

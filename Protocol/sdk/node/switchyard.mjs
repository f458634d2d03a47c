// The Switchyard plugin SDK as an ES module: `import { Plugin, Coordinator } from 'switchyard-sdk'`. A thin wrapper
// of the CommonJS entry, so both share one module instance (an `instanceof RPCError` holds across them).
import sdk from './switchyard.js';

export const {
  Plugin, Coordinator, Connection, Reply, RPCError, reject, untilRoot, untilTab, screen, coordinator, routes, ui, codes, PROTOCOL_VERSIONS, version,
} = sdk;
export default sdk;

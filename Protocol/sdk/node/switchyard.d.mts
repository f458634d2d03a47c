// Types of switchyard.mjs: the same API as the CommonJS entry (switchyard.d.ts).
export * from './switchyard.js';
import * as sdk from './switchyard.js';
export default sdk;

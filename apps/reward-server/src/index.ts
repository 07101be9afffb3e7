export { EXIT, main } from './main.js';
export type { ServerIo } from './main.js';

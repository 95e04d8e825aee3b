// Types of the undici files that src/client/undici.ts imports directly (undici ships types only for its index).
declare module 'undici/lib/dispatcher/pool' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}
declare module 'undici/lib/dispatcher/dispatcher' {
  import type { Dispatcher } from 'undici';
  const DispatcherClass: typeof Dispatcher;
  export default DispatcherClass;
}
declare module 'undici/lib/api' {
  const api: Record<string, unknown>;
  export default api;
}
declare module 'undici/lib/global' {
  import type { Dispatcher } from 'undici';
  export function getGlobalDispatcher(): Dispatcher;
}

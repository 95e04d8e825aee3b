// Types of the undici files that src/client/undici.ts imports directly (undici ships types only for its index).
declare module 'undici/lib/dispatcher/pool' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}

/**
 * Tables for notebooks: generic HTML tables (`table-html.ts`) and the run tables every lesson
 * needs, one run's latency summary and runs side by side (`tables-runs.ts`).
 */
export * from './table-html';
export * from './tables-runs';

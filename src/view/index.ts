/**
 * Plots and tables for notebooks: pure figure builders, a render layer, HTML tables.
 * In a tslab notebook import this file as `.../view/index`: tslab does not resolve directory imports.
 */
export * from './figure';
export * from './render';
export * from './tables';
export * from './banner';
export * from './provenance';
export * from './charts-latency';
export * from './charts-scaling';
export * from './charts-timeline';
export * from './waves';
export * from './charts-server';

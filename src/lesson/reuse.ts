/**
 * When may a saved load point stand in for a new measurement? The rule lives in
 * `src/runner/saved-point.ts` (one layer below, so sweeps apply it too); re-exported here for the lessons.
 */
export {
  type CurrentServer,
  describeServer,
  type PointLoad,
  savedPointDiffers,
  savedServerDiffers,
  stableJson,
} from '../runner/saved-point';
